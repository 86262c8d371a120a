"""Sidecar Web Search against a local fake Responses server (real HTTP, streamed SSE)."""

from __future__ import annotations

import asyncio
import io
import json
import socket
from dataclasses import dataclass
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
from pct_runtime.capabilities.openai.routes import ResolvedRoute, RouteUnavailable
from pct_runtime.capabilities.web_search import (
    OpenAIWebSearchTool,
    SidecarError,
    run_sidecar_search,
)
from pct_runtime.debug import DEBUG_CHANNEL, DebugSink
from pct_runtime.host.events import EventBus

CANARY = "sk-CANARY-5f1d2a9e"


@dataclass(frozen=True)
class Settings:
    mode: str = "live"
    context_size: str = "medium"


API_ROUTE = ResolvedRoute(
    provider="openai",
    api="openai-responses",
    model_id="gpt-5.4",
    base_url="https://api.openai.com/v1",
    credential_kind="api-key",
    token=CANARY,
)


def codex_route(token: str | None = None) -> ResolvedRoute:
    return ResolvedRoute(
        provider="openai-codex",
        api="openai-codex-responses",
        model_id="gpt-5.4",
        base_url="https://chatgpt.com/backend-api",
        credential_kind="codex-oauth",
        token=token if token is not None else codex_token("acct-123"),
    )


def search_call(*sources: dict[str, Any]) -> dict[str, Any]:
    return {
        "type": "web_search_call",
        "id": "ws_1",
        "status": "completed",
        "action": {"type": "search", "query": "q", "sources": list(sources)},
    }


def message(text: str, *annotations: dict[str, Any]) -> dict[str, Any]:
    return {
        "type": "message",
        "role": "assistant",
        "content": [{"type": "output_text", "text": text, "annotations": list(annotations)}],
    }


def completed_json(*items: dict[str, Any], status: str = "completed") -> dict[str, Any]:
    return {
        "id": "resp_1",
        "status": status,
        "output": list(items),
        "usage": {"input_tokens": 10, "output_tokens": 5, "total_tokens": 15},
    }


def codex_stream(*items: dict[str, Any], tail: list[Any] | None = None) -> Reply:
    events: list[Any] = [{"type": "response.created", "response": {"status": "in_progress"}}]
    for item in items:
        events.append({"type": "response.output_item.added", "item": {"type": item["type"]}})
        events.append({"type": "response.output_item.done", "item": item})
    events.append(
        {
            "type": "response.completed",
            "response": {"status": "completed", "usage": {"input_tokens": 3, "output_tokens": 4}},
        }
    )
    events.extend(tail or [])
    return sse_reply(*events, headers={"x-request-id": "req_abc"})


# --- API-key route ---------------------------------------------------------------------


async def test_api_key_request_shape_and_answer_with_deduplicated_sources(
    fake: FakeServer, loopback: LoopbackTransport
) -> None:
    fake.script(
        "/v1/responses",
        json_reply(
            completed_json(
                search_call(
                    {"type": "url", "url": "https://a.example/x#frag", "title": "A [one]"},
                    {"type": "url", "url": "https://a.example/x", "title": "dup without hash"},
                    {"type": "url", "url": "ftp://files.example/f"},
                    {"type": "url", "url": "javascript:alert(1)"},
                    {"type": "url", "url": "mailto:x@example.com"},
                    {"type": "url", "url": "http://b.example/p?q=1)", "title": " "},
                    {"type": "url", "url": "HTTPS://A.EXAMPLE:443/x", "title": "same as A"},
                    {"type": "url", "url": "https://bad.example:99999/"},
                    {"type": "url", "title": "no url"},
                    "not-an-object",
                ),
                message(
                    "  The answer.  ",
                    {"type": "url_citation", "url": "https://c.example/", "title": "C"},
                    {"type": "url_citation", "url": "https://a.example/x#other", "title": "A2"},
                    {"type": "file_citation", "url": "https://ignored.example/"},
                ),
            ),
            headers={"x-request-id": "req_123"},
        ),
    )
    result = await run_sidecar_search(
        "what is new?", API_ROUTE, Settings(mode="cached", context_size="high"), transport=loopback
    )
    assert len(fake.requests) == 1
    req = fake.requests[0]
    assert loopback.urls == ["https://api.openai.com/v1/responses"]
    assert req.headers["host"] == "api.openai.com"
    assert req.headers["authorization"] == f"Bearer {CANARY}"
    assert req.headers["content-type"] == "application/json"
    assert req.json() == {
        "model": "gpt-5.4",
        "input": "what is new?",
        "tools": [
            {"type": "web_search", "search_context_size": "high", "external_web_access": False}
        ],
        "tool_choice": "required",
        "include": ["web_search_call.action.sources"],
        "store": False,
    }
    assert result.answer == "The answer."
    assert [(s.title, s.url) for s in result.sources] == [
        ("A [one]", "https://a.example/x"),
        ("b.example", "http://b.example/p?q=1)"),
        ("C", "https://c.example/"),
    ]
    assert result.text == (
        "The answer.\n\nSources:\n"
        "- [A \\[one\\]](https://a.example/x)\n"
        "- [b.example](http://b.example/p?q=1%29)\n"
        "- [C](https://c.example/)"
    )
    assert result.usage == {
        "input": 10,
        "output": 5,
        "cacheRead": 0,
        "cacheWrite": 0,
        "totalTokens": 15,
    }


async def test_sources_are_capped_at_twenty_in_first_seen_order(
    fake: FakeServer, loopback: LoopbackTransport
) -> None:
    sources = [{"url": f"https://s{i}.example/", "title": f"S{i}"} for i in range(30)]
    fake.script("/v1/responses", json_reply(completed_json(search_call(*sources), message("ok"))))
    result = await run_sidecar_search("q", API_ROUTE, Settings(), transport=loopback)
    assert [s.title for s in result.sources] == [f"S{i}" for i in range(20)]
    assert result.text.count("\n- [") == 20


async def test_answer_without_sources_is_plain(
    fake: FakeServer, loopback: LoopbackTransport
) -> None:
    fake.script("/v1/responses", json_reply(completed_json(search_call(), message("only text"))))
    result = await run_sidecar_search("q", API_ROUTE, Settings(), transport=loopback)
    assert result.text == "only text"
    assert result.sources == []


# --- Codex OAuth route (streamed) ------------------------------------------------------


async def test_codex_streamed_request_sends_only_the_query(
    fake: FakeServer, loopback: LoopbackTransport
) -> None:
    fake.script(
        "/backend-api/codex/responses",
        codex_stream(
            {"type": "reasoning", "summary": []},
            search_call({"url": "https://news.example/a", "title": "News"}),
            message("Streamed answer", {"type": "url_citation", "url": "https://news.example/a#x"}),
        ),
    )
    token = codex_token("acct-777")
    result = await run_sidecar_search(
        "latest pi release", codex_route(token), Settings(), "high", transport=loopback
    )
    assert len(fake.requests) == 1
    req = fake.requests[0]
    assert req.path == "/backend-api/codex/responses"
    assert req.headers["host"] == "chatgpt.com"
    assert req.headers["authorization"] == f"Bearer {token}"
    assert req.headers["chatgpt-account-id"] == "acct-777"
    assert req.headers["originator"] == "pi"
    assert req.headers["openai-beta"] == "responses=experimental"
    assert req.headers["accept"] == "text/event-stream"
    assert req.headers["session_id"]
    body = req.json()
    assert body["input"] == [
        {"role": "user", "content": [{"type": "input_text", "text": "latest pi release"}]}
    ]
    assert body["instructions"] == (
        "Search the web for the user's query and answer accurately and concisely."
    )
    assert body["stream"] is True
    assert body["store"] is False
    assert body["tool_choice"] == "required"
    assert body["tools"] == [
        {"type": "web_search", "search_context_size": "medium", "external_web_access": True}
    ]
    assert "web_search_call.action.sources" in body["include"]
    assert body["reasoning"] == {"effort": "high", "summary": "auto"}
    assert result.answer == "Streamed answer"
    assert [(s.title, s.url) for s in result.sources] == [("News", "https://news.example/a")]


@pytest.mark.parametrize(
    ("level", "model", "expected"),
    [
        ("auto", "gpt-5.4", None),
        ("off", "gpt-5.4", {"effort": "none", "summary": "auto"}),
        ("minimal", "gpt-5.4", {"effort": "low", "summary": "auto"}),
        ("xhigh", "gpt-5.1", {"effort": "high", "summary": "auto"}),
        ("low", "gpt-5.1-codex-mini", {"effort": "medium", "summary": "auto"}),
    ],
)
async def test_codex_effort_mapping(
    fake: FakeServer, loopback: LoopbackTransport, level: str, model: str, expected: Any
) -> None:
    fake.script("/backend-api/codex/responses", codex_stream(search_call(), message("a")))
    route = ResolvedRoute(**{**codex_route().__dict__, "model_id": model})
    await run_sidecar_search("q", route, Settings(), level, transport=loopback)
    assert fake.requests[0].json().get("reasoning") == expected


# --- failure categories ----------------------------------------------------------------


async def _category(coro: Any) -> str:
    with pytest.raises(SidecarError) as info:
        await coro
    assert str(info.value) == f"OpenAI Web Search failed: {info.value.category}."
    return info.value.category


CODEX_PATH = "/backend-api/codex/responses"


@pytest.mark.parametrize(
    ("reply", "category"),
    [
        (Reply(status=500, chunks=[b"oops"]), "http-error"),
        (Reply(status=401, chunks=[b"{}"]), "http-error"),
        (Reply(status=302, headers={"location": "https://evil.example/"}), "http-error"),
        (sse_reply(b"data: {not json}\n\n"), "invalid-json"),
        (
            sse_reply({"type": "response.failed", "response": {"status": "failed"}}),
            "incomplete-response",
        ),
        (sse_reply({"type": "error", "message": "x"}), "incomplete-response"),
        (sse_reply({"type": "response.incomplete"}), "incomplete-response"),
        (
            sse_reply({"type": "response.output_item.done", "item": message("a")}),
            "incomplete-response",
        ),
        (
            sse_reply({"type": "response.completed", "response": {"status": "incomplete"}}),
            "incomplete-response",
        ),
        (
            codex_stream(
                search_call(),
                message("a"),
                tail=[{"type": "response.completed", "response": {"status": "completed"}}],
            ),
            "incomplete-response",
        ),
        (codex_stream(message("no search")), "missing-search-call"),
        (codex_stream(search_call(), message("   ")), "missing-answer"),
        (codex_stream(search_call()), "missing-answer"),
    ],
)
async def test_codex_failure_categories(
    fake: FakeServer, loopback: LoopbackTransport, reply: Reply, category: str
) -> None:
    fake.script(CODEX_PATH, reply)
    got = await _category(run_sidecar_search("q", codex_route(), Settings(), transport=loopback))
    assert got == category
    assert len(fake.requests) == 1, "never retried"


@pytest.mark.parametrize(
    ("reply", "category"),
    [
        (
            Reply(status=200, headers={"content-type": "application/json"}, chunks=[b"{oops"]),
            "invalid-json",
        ),
        (
            json_reply(completed_json(search_call(), message("a"), status="incomplete")),
            "incomplete-response",
        ),
        (json_reply({"status": "completed"}), "missing-search-call"),
        (json_reply(completed_json(message("a"))), "missing-search-call"),
        (json_reply(completed_json(search_call())), "missing-answer"),
        (json_reply({"error": "x"}, status=429), "http-error"),
    ],
)
async def test_api_key_failure_categories(
    fake: FakeServer, loopback: LoopbackTransport, reply: Reply, category: str
) -> None:
    fake.script("/v1/responses", reply)
    assert (
        await _category(run_sidecar_search("q", API_ROUTE, Settings(), transport=loopback))
        == category
    )
    assert len(fake.requests) == 1


async def test_timeout_category(fake: FakeServer, loopback: LoopbackTransport) -> None:
    fake.script(CODEX_PATH, Reply(headers={"content-type": "text/event-stream"}, hang=True))
    got = await _category(
        run_sidecar_search("q", codex_route(), Settings(), transport=loopback, timeout_s=0.5)
    )
    assert got == "timeout"


async def test_network_error_category() -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    # nothing listens on `port` now: the connection is refused
    got = await _category(
        run_sidecar_search("q", API_ROUTE, Settings(), transport=LoopbackTransport(port))
    )
    assert got == "network-error"


async def test_provider_unavailable_without_account_claim(
    fake: FakeServer, loopback: LoopbackTransport
) -> None:
    got = await _category(
        run_sidecar_search("q", codex_route(codex_token(None)), Settings(), transport=loopback)
    )
    assert got == "provider-unavailable"
    assert fake.requests == []


async def test_api_key_route_only_supports_auto_effort(
    fake: FakeServer, loopback: LoopbackTransport
) -> None:
    got = await _category(
        run_sidecar_search("q", API_ROUTE, Settings(), "high", transport=loopback)
    )
    assert got == "unsupported-sidecar-effort"
    assert fake.requests == []


async def test_cancellation_propagates_and_is_recorded_as_aborted(
    fake: FakeServer, loopback: LoopbackTransport
) -> None:
    fake.script(CODEX_PATH, Reply(headers={"content-type": "text/event-stream"}, hang=True))
    out = io.StringIO()
    task = asyncio.create_task(
        run_sidecar_search(
            "q", codex_route(), Settings(), transport=loopback, debug=DebugSink(True, stream=out)
        )
    )
    while not fake.requests:  # noqa: ASYNC110 - the request arrives in another thread
        await asyncio.sleep(0.01)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert json.loads(out.getvalue())["errorCategory"] == "aborted"


# --- the tool --------------------------------------------------------------------------


def make_tool(
    route: ResolvedRoute | None, transport: Any, reason: str = "missing-openai-auth", **kw: Any
) -> OpenAIWebSearchTool:
    async def resolve() -> ResolvedRoute:
        if route is None:
            raise RouteUnavailable(reason)
        return route

    return OpenAIWebSearchTool(resolve_route=resolve, settings=Settings, transport=transport, **kw)


async def test_tool_result_text_and_details(
    fake: FakeServer, loopback: LoopbackTransport, tmp_path: Path
) -> None:
    fake.script(
        CODEX_PATH,
        codex_stream(search_call({"url": "https://x.example/a", "title": "X"}), message("Hi")),
    )
    tool = make_tool(codex_route(), loopback)
    assert tool.spec.name == "openai_web_search"
    assert tool.spec.description == (
        "Search the web through the configured OpenAI Responses sidecar and return an answer"
        " with sources."
    )
    assert tool.spec.input_schema["additionalProperties"] is False
    result = await tool({"query": "q"}, CallContext(cwd=tmp_path))
    assert result.text == "Hi\n\nSources:\n- [X](https://x.example/a)"
    assert result.details == {
        "answer": "Hi",
        "sources": [{"title": "X", "url": "https://x.example/a"}],
        "usage": {"input": 3, "output": 4, "cache_read": 0, "cache_write": 0, "total_tokens": 7},
    }


@pytest.mark.parametrize(
    "args", [{}, {"query": ""}, {"query": "   "}, {"query": 3}, {"query": "q", "n": 1}]
)
async def test_tool_rejects_bad_arguments_without_a_request(
    fake: FakeServer, loopback: LoopbackTransport, tmp_path: Path, args: dict[str, Any]
) -> None:
    with pytest.raises(ToolError) as info:
        await make_tool(codex_route(), loopback)(args, CallContext(cwd=tmp_path))
    assert info.value.code == "invalid-arguments"
    assert fake.requests == []


async def test_tool_unavailable_route_and_unofficial_base_url(
    fake: FakeServer, loopback: LoopbackTransport, tmp_path: Path
) -> None:
    with pytest.raises(ToolError) as info:
        await make_tool(None, loopback)({"query": "q"}, CallContext(cwd=tmp_path))
    assert info.value.message == "OpenAI Web Search is unavailable: missing-openai-auth."
    proxied = ResolvedRoute(**{**API_ROUTE.__dict__, "base_url": "https://proxy.example/v1"})
    with pytest.raises(ToolError) as info:
        await make_tool(proxied, loopback)({"query": "q"}, CallContext(cwd=tmp_path))
    assert info.value.message == "OpenAI Web Search is unavailable: unofficial-endpoint."
    assert fake.requests == []


async def test_tool_failure_message(
    fake: FakeServer, loopback: LoopbackTransport, tmp_path: Path
) -> None:
    fake.script(CODEX_PATH, Reply(status=503))
    with pytest.raises(ToolError) as info:
        await make_tool(codex_route(), loopback)({"query": "q"}, CallContext(cwd=tmp_path))
    assert info.value.code == "http-error"
    assert info.value.message == "OpenAI Web Search failed: http-error."


# --- debug -----------------------------------------------------------------------------


async def test_debug_carries_metadata_only(fake: FakeServer, loopback: LoopbackTransport) -> None:
    secret_query = "CANARY-QUERY-91c"
    fake.script(
        "/v1/responses",
        json_reply(
            completed_json(
                search_call({"url": "https://secret.example/"}), message("CANARY-ANSWER")
            ),
            headers={"x-request-id": "req_42"},
        ),
    )
    out = io.StringIO()
    bus = EventBus()
    seen: list[Any] = []
    bus.subscribe(DEBUG_CHANNEL, seen.append)
    await run_sidecar_search(
        secret_query, API_ROUTE, Settings(), transport=loopback, debug=DebugSink(True, bus, out)
    )
    line = json.loads(out.getvalue())
    assert line == seen[0]
    assert line["feature"] == "web-search-sidecar"
    assert line["provider"] == "openai"
    assert line["api"] == "openai-responses"
    assert line["model"] == "gpt-5.4"
    assert line["endpointHost"] == "api.openai.com"
    assert line["status"] == 200
    assert line["requestId"] == "req_42"
    assert line["contentBlocks"] == {"web_search_call": 1, "message": 1, "output_text": 1}
    assert isinstance(line["durationMs"], int)
    text = out.getvalue() + json.dumps(seen)
    for secret in (CANARY, secret_query, "CANARY-ANSWER", "secret.example", "authorization"):
        assert secret not in text


async def test_debug_disabled_writes_nothing(fake: FakeServer, loopback: LoopbackTransport) -> None:
    fake.script("/v1/responses", Reply(status=500))
    out = io.StringIO()
    with pytest.raises(SidecarError):
        await run_sidecar_search(
            "q", API_ROUTE, Settings(), transport=loopback, debug=DebugSink(False, stream=out)
        )
    assert out.getvalue() == ""
