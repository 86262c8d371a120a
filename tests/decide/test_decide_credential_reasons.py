"""The reason a route gives per credential: none, API key, ChatGPT login, wrong kind.

No credential at all must say `missing-openai-auth` (the fix: log in with Pi or set
`OPENAI_API_KEY`), never `credential-mismatch` (a credential of the wrong kind) or
`unsupported-provider` (a current model whose provider cannot carry the route).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from decide_fixtures import CODEX, OPENAI, THIRD_PARTY, plan

from pct_runtime.capabilities.openai.resolve import resolve_model_route
from pct_runtime.capabilities.openai.routes import RouteUnavailable
from pct_runtime.host.pi.credentials import (
    ApiKeyCredential,
    Credential,
    Credentials,
    OAuthCredential,
)
from pct_runtime.host.pi.model_registry import Model, ModelRegistry

#: The user's Pi credentials, as auth.json entries plus the environment.
SETUPS: dict[str, tuple[dict[str, Credential], dict[str, str]]] = {
    # Nothing for OpenAI; the third-party current model has its own key.
    "none": ({"anthropic": ApiKeyCredential("anthropic", "sk-ant")}, {}),
    "api-key": ({}, {"OPENAI_API_KEY": "sk-env"}),
    "chatgpt-login": ({"openai-codex": OAuthCredential("openai-codex", "tok", "ref", 0)}, {}),
    # An API key stored for the Codex provider and a login stored for the API-key provider.
    "wrong-kind": (
        {
            "openai-codex": ApiKeyCredential("openai-codex", "sk-x"),
            "openai": OAuthCredential("openai", "tok", "ref", 0),
        },
        {},
    ),
}


def registry(setup: str) -> ModelRegistry:
    stored, env = SETUPS[setup]
    models = [*ModelRegistry.builtin().all(), THIRD_PARTY]
    return ModelRegistry(models, Credentials(stored, env=env))


def row(cfg: dict[str, Any], capability: str, model: Model, setup: str, kind: Any) -> Any:
    return plan(cfg, model=model, reg=registry(setup), kind=kind).decisions[capability]


IMAGE = {"imageGeneration": {"enabled": True}, "toolDiscovery": {"enabled": False}}

# (current model, setup, effective, backend, reason)
IMAGE_CASES = [
    (THIRD_PARTY, "none", "unavailable", "—", "missing-openai-auth"),
    (THIRD_PARTY, "api-key", "active", "api-key", ""),
    (THIRD_PARTY, "chatgpt-login", "active", "codex-oauth", ""),
    (THIRD_PARTY, "wrong-kind", "unavailable", "—", "credential-mismatch"),
    (CODEX, "none", "unavailable", "—", "missing-openai-auth"),
    (CODEX, "api-key", "active", "api-key", ""),
    (CODEX, "chatgpt-login", "active", "codex-oauth", ""),
    (CODEX, "wrong-kind", "unavailable", "—", "credential-mismatch"),
    (OPENAI, "none", "unavailable", "—", "missing-openai-auth"),
    (OPENAI, "api-key", "active", "api-key", ""),
    (OPENAI, "chatgpt-login", "active", "codex-oauth", ""),
    (OPENAI, "wrong-kind", "unavailable", "—", "credential-mismatch"),
]


@pytest.mark.parametrize(
    ("model", "setup", "effective", "backend", "reason"),
    IMAGE_CASES,
    ids=[f"{c[0].provider}-{c[1]}" for c in IMAGE_CASES],
)
def test_image_generation(
    model: Model, setup: str, effective: str, backend: str, reason: str
) -> None:
    for kind in ("mcp", "embedded"):
        d = row(IMAGE, "image_generation", model, setup, kind)
        assert (d.effective, d.backend, d.reason) == (effective, backend, reason)


def sidecar(provider: str) -> dict[str, Any]:
    ref = {"provider": provider, "model": "gpt-5.4", "thinkingLevel": "auto"}
    return {"webSearch": {"enabled": True, "backend": "sidecar", "sidecarModel": ref}}


# (executor provider, setup, effective backend, reason); the current model is third-party.
SIDECAR_CASES = [
    ("openai-codex", "none", "unavailable", "missing-openai-auth"),
    # An OpenAI API key is nothing for the Codex provider: still no credential for it.
    ("openai-codex", "api-key", "unavailable", "missing-openai-auth"),
    ("openai-codex", "chatgpt-login", "sidecar", ""),
    ("openai-codex", "wrong-kind", "unavailable", "credential-mismatch"),
    ("openai", "none", "unavailable", "missing-openai-auth"),
    ("openai", "api-key", "sidecar", ""),
    ("openai", "chatgpt-login", "unavailable", "missing-openai-auth"),
    ("openai", "wrong-kind", "unavailable", "credential-mismatch"),
]


@pytest.mark.parametrize(
    ("provider", "setup", "backend", "reason"),
    SIDECAR_CASES,
    ids=[f"{c[0]}-{c[1]}" for c in SIDECAR_CASES],
)
def test_web_search_sidecar(provider: str, setup: str, backend: str, reason: str) -> None:
    for kind in ("mcp", "embedded"):
        d = row(sidecar(provider), "web_search", THIRD_PARTY, setup, kind)
        assert (d.effective_backend, d.reason) == (backend, reason)


def test_auto_search_over_mcp_reports_the_sidecar_reason() -> None:
    cfg = sidecar("openai-codex")
    cfg["webSearch"]["backend"] = "auto"
    d = row(cfg, "web_search", CODEX, "none", "mcp")
    assert (d.effective_backend, d.reason) == ("unavailable", "missing-openai-auth")


NATIVE = {"webSearch": {"enabled": True, "backend": "native"}}
REMOTE = {"remoteCompaction": {"enabled": True}}

# (capability, config, current model, setup, effective, reason), embedded session.
CURRENT_ROUTE_CASES = [
    ("web_search", NATIVE, CODEX, "none", "unavailable", "missing-openai-auth"),
    ("web_search", NATIVE, CODEX, "api-key", "unavailable", "missing-openai-auth"),
    ("web_search", NATIVE, CODEX, "chatgpt-login", "active", ""),
    ("web_search", NATIVE, CODEX, "wrong-kind", "unavailable", "credential-mismatch"),
    ("web_search", NATIVE, OPENAI, "none", "unavailable", "missing-openai-auth"),
    ("web_search", NATIVE, OPENAI, "api-key", "active", ""),
    ("web_search", NATIVE, OPENAI, "wrong-kind", "unavailable", "credential-mismatch"),
    ("web_search", NATIVE, THIRD_PARTY, "api-key", "unavailable", "unsupported-provider"),
    ("remote_compaction", REMOTE, CODEX, "none", "unavailable", "missing-openai-auth"),
    ("remote_compaction", REMOTE, CODEX, "chatgpt-login", "active", ""),
    ("remote_compaction", REMOTE, CODEX, "wrong-kind", "unavailable", "credential-mismatch"),
    # The API-key route cannot carry Remote Compaction, with or without a key.
    ("remote_compaction", REMOTE, OPENAI, "none", "unavailable", "unsupported-provider"),
    ("remote_compaction", REMOTE, OPENAI, "api-key", "unavailable", "unsupported-provider"),
    ("remote_compaction", REMOTE, OPENAI, "wrong-kind", "unavailable", "credential-mismatch"),
    ("remote_compaction", REMOTE, THIRD_PARTY, "none", "unavailable", "unsupported-provider"),
]


@pytest.mark.parametrize(
    ("capability", "cfg", "model", "setup", "effective", "reason"),
    CURRENT_ROUTE_CASES,
    ids=[f"{c[0]}-{c[2].provider}-{c[3]}" for c in CURRENT_ROUTE_CASES],
)
def test_current_model_routes(
    capability: str,
    cfg: dict[str, Any],
    model: Model,
    setup: str,
    effective: str,
    reason: str,
) -> None:
    d = row(cfg, capability, model, setup, "embedded")
    assert (d.effective, d.reason) == (effective, reason)


# The per-call resolution (what a tool call reports) agrees with the status rows.
RESOLVE_CASES = [
    (CODEX, "none", "missing-openai-auth"),
    (CODEX, "api-key", "missing-openai-auth"),
    (CODEX, "wrong-kind", "credential-mismatch"),
    (OPENAI, "none", "missing-openai-auth"),
    (OPENAI, "chatgpt-login", "missing-openai-auth"),
    (OPENAI, "wrong-kind", "credential-mismatch"),
]


@pytest.mark.parametrize(
    ("model", "setup", "reason"),
    RESOLVE_CASES,
    ids=[f"{c[0].provider}-{c[1]}" for c in RESOLVE_CASES],
)
async def test_call_time_resolution(model: Model, setup: str, reason: str, tmp_path: Path) -> None:
    stored, env = SETUPS[setup]
    with pytest.raises(RouteUnavailable) as info:
        await resolve_model_route(model, Credentials(stored, env=env), tmp_path)
    assert info.value.reason == reason


async def test_call_time_resolution_with_api_key(tmp_path: Path) -> None:
    stored, env = SETUPS["api-key"]
    route = await resolve_model_route(OPENAI, Credentials(stored, env=env), tmp_path)
    assert (route.credential_kind, route.token) == ("api-key", "sk-env")
