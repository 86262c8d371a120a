"""A canary secret must never reach stderr, the event bus or any log, whatever happens.

Every OpenAI feature runs with `debug: true` (default stderr sink + bus) and every logger
at DEBUG, through success and failure paths, with the canary used as the API key, the
OAuth access/refresh tokens, the prompt, the query, the checkpoint and the fallback text.
"""

from __future__ import annotations

import base64
import json
import logging
from pathlib import Path
from typing import Any

import pytest
from openai_fakes import (  # type: ignore[import-not-found]
    FakeServer,
    LoopbackTransport,
    Reply,
    codex_token,
    json_reply,
    sse_reply,
)

from pct_runtime.capabilities.base import CallContext, ToolError
from pct_runtime.capabilities.compaction import CompactionPreparation, RemoteCompaction
from pct_runtime.capabilities.image import OpenAIImageTool
from pct_runtime.capabilities.openai.routes import ResolvedRoute
from pct_runtime.capabilities.web_search import OpenAIWebSearchTool
from pct_runtime.debug import DEBUG_CHANNEL, DebugRecord, DebugSink
from pct_runtime.host.events import EventBus
from pct_runtime.host.pi.oauth import OAuthRefreshError, fresh_codex_credential

CANARY = "CANARY-7c0ffee-SECRET"
OAUTH_TOKEN = codex_token("acct-canary", {"canary": CANARY})


class Settings:
    mode = "live"
    context_size = "medium"


def api_route() -> ResolvedRoute:
    return ResolvedRoute(
        "openai", "openai-responses", "gpt-5.4", "https://api.openai.com/v1", "api-key", CANARY
    )


def codex_route() -> ResolvedRoute:
    return ResolvedRoute(
        "openai-codex",
        "openai-codex-responses",
        "gpt-5.4",
        "https://chatgpt.com/backend-api",
        "codex-oauth",
        OAUTH_TOKEN,
    )


async def test_canary_never_leaks(
    tmp_path: Path,
    fake: FakeServer,
    loopback: LoopbackTransport,
    capfd: pytest.CaptureFixture[str],
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG)
    bus = EventBus()
    published: list[Any] = []
    bus.subscribe(DEBUG_CHANNEL, published.append)
    sink = DebugSink(True, bus)  # default stream: the real stderr

    async def resolve_api() -> ResolvedRoute:
        return api_route()

    async def resolve_codex() -> ResolvedRoute:
        return codex_route()

    ctx = CallContext(cwd=tmp_path, tool_call_id="call-x")
    search_ok = {
        "status": "completed",
        "output": [
            {"type": "web_search_call", "action": {"sources": [{"url": f"https://x.io/{CANARY}"}]}},
            {"type": "message", "content": [{"type": "output_text", "text": CANARY}]},
        ],
    }
    fake.script("/v1/responses", json_reply(search_ok), Reply(status=500, chunks=[CANARY.encode()]))
    search = OpenAIWebSearchTool(
        resolve_route=resolve_api, settings=Settings, debug=sink, transport=loopback
    )
    await search({"query": CANARY}, ctx)
    with pytest.raises(ToolError):
        await search({"query": CANARY}, ctx)

    png = b"\x89PNG\r\n\x1a\n" + CANARY.encode()
    fake.script(
        "/backend-api/codex/images/generations",
        json_reply({"data": [{"b64_json": base64.b64encode(png).decode()}]}),
        json_reply({"data": [{"b64_json": base64.b64encode(CANARY.encode()).decode()}]}),
    )
    image = OpenAIImageTool(
        resolve_route=resolve_codex, agent_dir=lambda: tmp_path, debug=sink, transport=loopback
    )
    await image({"prompt": CANARY}, ctx)
    with pytest.raises(ToolError):
        await image({"prompt": CANARY}, ctx)

    checkpoint = {"type": "compaction", "encrypted_content": CANARY}
    fake.script(
        "/backend-api/codex/responses",
        sse_reply(
            {"type": "response.output_item.done", "item": checkpoint},
            {"type": "response.completed", "response": {"status": "completed"}},
        ),
        sse_reply({"type": "error", "message": CANARY}),
    )
    hook = RemoteCompaction(
        enabled=lambda: True, resolve_route=resolve_codex, debug=sink, transport=loopback
    )
    prep = CompactionPreparation(
        input_items=[{"role": "user", "content": [{"type": "input_text", "text": CANARY}]}],
        transcript=CANARY,
        first_kept_entry_id="e",
        tokens_before=1,
        system_prompt=CANARY,
    )
    assert await hook.before_compact(prep) is not None
    assert await hook.before_compact(prep) is None

    (tmp_path / "auth.json").write_text(
        json.dumps(
            {
                "openai-codex": {
                    "type": "oauth",
                    "access": CANARY,
                    "refresh": CANARY,
                    "expires": 0,
                }
            }
        )
    )
    fake.script("/oauth/token", json_reply({"error": CANARY}, status=400))
    with pytest.raises(OAuthRefreshError) as info:
        await fresh_codex_credential(tmp_path, transport=loopback)
    assert CANARY not in str(info.value)
    assert CANARY not in repr(codex_route())
    assert CANARY not in repr(api_route())

    captured = capfd.readouterr()
    assert len(published) == 6
    assert captured.err.count("\n") == 6
    blob = captured.out + captured.err + caplog.text + json.dumps(published)
    assert "HTTP Request: POST" in caplog.text  # the loggers really were captured
    assert CANARY not in blob
    assert OAUTH_TOKEN not in blob
    assert "acct-canary" not in blob


def test_record_drops_values_that_are_not_identifiers() -> None:
    record = DebugRecord(
        feature="web-search-sidecar",
        model=f"gpt {CANARY} with spaces",
        request_id="Bearer sk-abc def",
        error_category="http-error",
        content_blocks={"message": 1, "bad key!": 2},
    )
    out = record.to_json_dict()
    assert out == {
        "feature": "web-search-sidecar",
        "contentBlocks": {"message": 1},
        "errorCategory": "http-error",
    }
