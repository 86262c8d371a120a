"""The runtime-facing builders, driven by a real config, Pi registry and auth.json."""

from __future__ import annotations

import base64
import io
import json
import os
from pathlib import Path
from typing import Any

import pytest
from openai_fakes import (  # type: ignore[import-not-found]
    FakeServer,
    LoopbackTransport,
    codex_token,
    json_reply,
    sse_reply,
)

from pct_runtime.capabilities.base import CallContext, ToolError
from pct_runtime.capabilities.compaction import CompactionPreparation
from pct_runtime.capabilities.openai.factory import (
    build_image_tool,
    build_remote_compaction,
    build_web_search_tool,
)
from pct_runtime.config import parse_config
from pct_runtime.debug import DebugSink
from pct_runtime.host.pi.model_registry import ModelRegistry

ACCESS = codex_token("acct-f")


def agent(tmp_path: Path, expires: int = 4_000_000_000_000) -> Path:
    (tmp_path / "auth.json").write_text(
        json.dumps(
            {
                "openai-codex": {
                    "type": "oauth",
                    "access": ACCESS,
                    "refresh": "rt",
                    "expires": expires,
                }
            }
        )
    )
    return tmp_path


def search_stream() -> Any:
    return sse_reply(
        {
            "type": "response.output_item.done",
            "item": {"type": "web_search_call", "action": {"sources": []}},
        },
        {
            "type": "response.output_item.done",
            "item": {"type": "message", "content": [{"type": "output_text", "text": "ok"}]},
        },
        {"type": "response.completed", "response": {"status": "completed"}},
    )


async def test_web_search_uses_the_configured_executor_and_its_effort(
    tmp_path: Path, fake: FakeServer, loopback: LoopbackTransport
) -> None:
    directory = agent(tmp_path)
    config = parse_config(
        {
            "webSearch": {
                "enabled": True,
                "backend": "sidecar",
                "mode": "cached",
                "contextSize": "low",
                "sidecarModel": {
                    "provider": "openai-codex",
                    "model": "gpt-5.4",
                    "thinkingLevel": "low",
                },
            },
            "debug": True,
        }
    )
    registry = ModelRegistry.load(directory, env={})
    out = io.StringIO()
    tool = build_web_search_tool(
        config=lambda: config,
        registry=lambda: registry,
        agent_dir=lambda: directory,
        debug=DebugSink(lambda: config.debug, stream=out),
        transport=loopback,
    )
    fake.script("/backend-api/codex/responses", search_stream())
    result = await tool({"query": "q"}, CallContext(cwd=tmp_path))
    assert result.text == "ok"
    body = fake.requests[0].json()
    assert body["model"] == "gpt-5.4"
    assert body["reasoning"] == {"effort": "low", "summary": "auto"}
    assert body["tools"] == [
        {"type": "web_search", "search_context_size": "low", "external_web_access": False}
    ]
    assert json.loads(out.getvalue())["feature"] == "web-search-sidecar"


async def test_web_search_without_executor_or_auth_is_unavailable(
    tmp_path: Path, loopback: LoopbackTransport
) -> None:
    registry = ModelRegistry.load(tmp_path, env={})
    none = parse_config({"webSearch": {"enabled": True}})
    tool = build_web_search_tool(
        config=lambda: none,
        registry=lambda: registry,
        agent_dir=lambda: tmp_path,
        transport=loopback,
    )
    with pytest.raises(ToolError) as info:
        await tool({"query": "q"}, CallContext(cwd=tmp_path))
    assert info.value.message == "OpenAI Web Search is unavailable: missing-sidecar-model."
    api = parse_config(
        {"webSearch": {"enabled": True, "sidecarModel": {"provider": "openai", "model": "gpt-5.4"}}}
    )
    tool = build_web_search_tool(
        config=lambda: api,
        registry=lambda: registry,
        agent_dir=lambda: tmp_path,
        transport=loopback,
    )
    with pytest.raises(ToolError) as info:
        await tool({"query": "q"}, CallContext(cwd=tmp_path))
    assert info.value.message == "OpenAI Web Search is unavailable: missing-openai-auth."


async def test_image_tool_refreshes_an_expired_token_before_the_request(
    tmp_path: Path, fake: FakeServer, loopback: LoopbackTransport
) -> None:
    directory = agent(tmp_path, expires=1)
    registry = ModelRegistry.load(directory, env={})
    model = registry.find("openai-codex", "gpt-5.4")
    assert model is not None
    fresh = codex_token("acct-fresh")
    fake.script(
        "/oauth/token",
        json_reply({"access_token": fresh, "refresh_token": "rt2", "expires_in": 3600}),
    )
    png = b"\x89PNG\r\n\x1a\nrest"
    fake.script(
        "/backend-api/codex/images/generations",
        json_reply({"data": [{"b64_json": base64.b64encode(png).decode()}]}),
    )
    tool = build_image_tool(
        pick_model=lambda: model,
        registry=lambda: registry,
        agent_dir=lambda: directory,
        transport=loopback,
    )
    result = await tool({"prompt": "p"}, CallContext(cwd=tmp_path, tool_call_id="c1"))
    assert [r.path for r in fake.requests] == [
        "/oauth/token",
        "/backend-api/codex/images/generations",
    ]
    assert fake.requests[1].headers["authorization"] == f"Bearer {fresh}"
    assert fake.requests[1].headers["chatgpt-account-id"] == "acct-fresh"
    assert result.images[0].data == png
    assert os.stat(result.details["path"]).st_size == len(png)


async def test_remote_compaction_follows_the_enabled_flag(
    tmp_path: Path, fake: FakeServer, loopback: LoopbackTransport
) -> None:
    directory = agent(tmp_path)
    registry = ModelRegistry.load(directory, env={})
    config = parse_config({"remoteCompaction": {"enabled": False}})
    hook = build_remote_compaction(
        config=lambda: config,
        current_model=lambda: registry.find("openai-codex", "gpt-5.4"),
        registry=lambda: registry,
        agent_dir=lambda: directory,
        transport=loopback,
    )
    prep = CompactionPreparation(
        input_items=[{"role": "user", "content": "hi"}],
        transcript="hi",
        first_kept_entry_id="e",
        tokens_before=1,
    )
    assert await hook.before_compact(prep) is None
    config = parse_config({"remoteCompaction": {"enabled": True}})
    fake.script(
        "/backend-api/codex/responses",
        sse_reply(
            {
                "type": "response.output_item.done",
                "item": {"type": "compaction", "encrypted_content": "e"},
            },
            {"type": "response.completed", "response": {"status": "completed"}},
        ),
    )
    result = await hook.before_compact(prep)
    assert result is not None
    assert result.details["compatibility"]["model"] == "gpt-5.4"
    assert len(fake.requests) == 1
