"""Every Web Search backend resolution case, followed through to what actually happens.

For each (backend, session kind, main model, sidecar executor) the decision layer's
resolution is checked against the spec's rules, and then exercised: a native decision
changes the agent's Responses payload and never calls the sidecar; a sidecar decision
leaves the payload untouched and sends exactly one request carrying only the query; an
unavailable decision does neither. There is never more than one search path per turn.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from openai_fakes import (  # type: ignore[import-not-found]
    FakeServer,
    LoopbackTransport,
    codex_token,
    sse_reply,
)

from pct_runtime.capabilities.base import CallContext
from pct_runtime.capabilities.openai.factory import build_web_search_tool
from pct_runtime.capabilities.web_search import inject_native_search
from pct_runtime.config import parse_config
from pct_runtime.decide.decisions import WebSearchSettings, decide_web_search
from pct_runtime.host.pi.credentials import Credentials
from pct_runtime.host.pi.model_registry import Model, ModelRegistry

CODEX = Model(
    "openai-codex", "gpt-5.4", "openai-codex-responses", "https://chatgpt.com/backend-api"
)
OPENAI = Model("openai", "gpt-5.4", "openai-responses", "https://api.openai.com/v1")
PROXY = Model("openai", "gpt-proxy", "openai-responses", "https://proxy.example/v1")
CHAT = Model("openai", "gpt-chat", "openai-completions", "https://api.openai.com/v1")
CLAUDE = Model("anthropic", "claude", "anthropic-messages", "https://api.anthropic.com")
MAIN_MODELS = {"codex": CODEX, "openai": OPENAI, "proxy": PROXY, "chat": CHAT, "claude": CLAUDE}

AGENT_PAYLOAD = {
    "model": "main",
    "input": [{"role": "user", "content": [{"type": "input_text", "text": "history"}]}],
    "tools": [{"type": "function", "name": "read"}],
}


def expected_native(main: Model | None, kind: str) -> bool:
    """Spec: native only with a payload hook and an official Responses main route."""
    return kind == "embedded" and main in (CODEX, OPENAI)


def expected_backend(backend: str, native_ok: bool, sidecar_ok: bool, main: Model | None) -> str:
    if main is None:
        return "unavailable"
    if backend == "native":
        return "native" if native_ok else "unavailable"
    if backend == "sidecar":
        return "sidecar" if sidecar_ok else "unavailable"
    if native_ok:
        return "native"
    return "sidecar" if sidecar_ok else "unavailable"


CASES = [
    (backend, kind, main, sidecar)
    for backend in ("auto", "native", "sidecar")
    for kind in ("embedded", "mcp")
    for main in (*MAIN_MODELS, None)
    for sidecar in ("codex", "none", "unknown-model")
]


@pytest.mark.parametrize(("backend", "kind", "main_name", "sidecar"), CASES)
async def test_backend_resolution_and_effect(
    tmp_path: Path,
    fake: FakeServer,
    loopback: LoopbackTransport,
    backend: str,
    kind: str,
    main_name: str | None,
    sidecar: str,
) -> None:
    (tmp_path / "auth.json").write_text(
        json.dumps(
            {
                "openai-codex": {
                    "type": "oauth",
                    "access": codex_token("acct-s"),
                    "refresh": "r",
                    "expires": 4_000_000_000_000,
                }
            }
        )
    )
    credentials = Credentials.load(tmp_path, env={"OPENAI_API_KEY": "sk-env"})
    registry = ModelRegistry([CODEX, OPENAI, PROXY, CHAT, CLAUDE], credentials)
    sidecar_model = {
        "codex": {"provider": "openai-codex", "model": "gpt-5.4"},
        "none": None,
        "unknown-model": {"provider": "openai-codex", "model": "gpt-retired"},
    }[sidecar]
    config = parse_config(
        {"webSearch": {"enabled": True, "backend": backend, "sidecarModel": sidecar_model}}
    )
    ws = config.web_search
    main = MAIN_MODELS[main_name] if main_name else None
    decision = decide_web_search(
        WebSearchSettings(ws.enabled, ws.backend, ws.sidecar_model),
        main,
        registry,
        kind,  # type: ignore[arg-type]
    )
    want = expected_backend(backend, expected_native(main, kind), sidecar == "codex", main)
    assert decision.effective_backend == want
    assert (decision.effective == "active") == (want != "unavailable")

    # What the embedder's request hook does this turn.
    native_config = ws if decision.effective_backend == "native" else None
    payload = inject_native_search(AGENT_PAYLOAD, native_config)
    native_used = payload is not AGENT_PAYLOAD
    assert native_used == (want == "native")
    if native_used:
        assert {
            "type": "web_search",
            "search_context_size": "medium",
            "external_web_access": True,
        } in payload["tools"]

    # The sidecar tool is only registered for a sidecar decision; calling it is one request.
    sidecar_used = False
    if decision.effective_backend == "sidecar":
        fake.script(
            "/backend-api/codex/responses",
            sse_reply(
                {
                    "type": "response.output_item.done",
                    "item": {"type": "web_search_call", "action": {"sources": []}},
                },
                {
                    "type": "response.output_item.done",
                    "item": {"type": "message", "content": [{"type": "output_text", "text": "a"}]},
                },
                {"type": "response.completed", "response": {"status": "completed"}},
            ),
        )
        tool = build_web_search_tool(
            config=lambda: config,
            registry=lambda: registry,
            agent_dir=lambda: tmp_path,
            transport=loopback,
        )
        await tool({"query": "the query"}, CallContext(cwd=tmp_path))
        sidecar_used = True
        assert len(fake.requests) == 1
        body = fake.requests[0].json()
        assert body["input"] == [
            {"role": "user", "content": [{"type": "input_text", "text": "the query"}]}
        ]
        assert "history" not in json.dumps(body)
    assert not (native_used and sidecar_used), "at most one search path per turn"
    if want != "sidecar":
        assert fake.requests == []
    if kind == "mcp" and backend == "native" and main is not None:
        assert decision.reason == "no-payload-hook"


def test_case_matrix_is_complete() -> None:
    assert len(CASES) == 3 * 2 * 6 * 3
    assert len(set(CASES)) == len(CASES)
