"""Sidecar Web Search: one separate Responses request that sends only the query.

API-key routes POST the documented JSON body to `https://api.openai.com/v1/responses`;
Codex OAuth routes send one streamed (SSE) request shaped like Pi's Codex provider to
`https://chatgpt.com/backend-api/codex/responses` and aggregate the completed output items.
Exactly one HTTP request per call: no retry, no fallback to another route or backend.
"""

from __future__ import annotations

import asyncio
import json
import time
import uuid
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING
from urllib.parse import urlsplit, urlunsplit

from pct_runtime.capabilities.openai.http import USER_AGENT, open_client, request_id
from pct_runtime.capabilities.openai.routes import (
    RESPONSES_ENDPOINTS,
    ResolvedRoute,
    account_id_from_token,
    endpoint_host,
)
from pct_runtime.capabilities.openai.sse import SSEDecodeError, SSEDecoder
from pct_runtime.capabilities.web_search.native import (
    SOURCES_INCLUDE,
    SearchSettings,
    web_search_tool_json,
)
from pct_runtime.debug import DISABLED, DebugRecord, DebugSink
from pct_runtime.jsontypes import JSONMapping, JSONObject

if TYPE_CHECKING:  # httpx (and the rich it loads) is imported where a request is made
    import httpx

SIDECAR_TIMEOUT_S = 30.0
SIDECAR_SOURCE_LIMIT = 20
SIDECAR_SYSTEM_PROMPT = "Search the web for the user's query and answer accurately and concisely."
FEATURE = "web-search-sidecar"

ERROR_CATEGORIES = (
    "aborted",
    "timeout",
    "network-error",
    "http-error",
    "invalid-json",
    "incomplete-response",
    "missing-search-call",
    "missing-answer",
    "provider-unavailable",
    "unsupported-sidecar-effort",
)


class SidecarError(Exception):
    """A failed search; `str()` is the exact model-facing text."""

    def __init__(self, category: str) -> None:
        super().__init__(f"OpenAI Web Search failed: {category}.")
        self.category = category


@dataclass(frozen=True)
class SearchSource:
    title: str
    url: str


@dataclass
class SidecarResult:
    answer: str
    sources: list[SearchSource]
    text: str
    usage: dict[str, int] | None = None


@dataclass
class _Parsed:
    answer: str
    sources: list[SearchSource]
    block_counts: dict[str, int] = field(default_factory=dict)
    usage: dict[str, int] | None = None


def _normalized_source(value: object) -> SearchSource | None:
    if not isinstance(value, dict) or not isinstance(value.get("url"), str):
        return None
    raw = value["url"].strip()
    try:
        parts = urlsplit(raw)
        host = parts.hostname
    except ValueError:
        return None
    if parts.scheme.lower() not in ("http", "https") or not host:
        return None
    scheme = parts.scheme.lower()
    try:
        port = parts.port
    except ValueError:
        return None
    netloc = parts.netloc if "@" in parts.netloc else parts.netloc.lower()
    if port is not None and (scheme, port) in (("https", 443), ("http", 80)):
        netloc = netloc.rsplit(":", 1)[0]
    path = (parts.path or "/").replace(" ", "%20")
    url = urlunsplit((scheme, netloc, path, parts.query.replace(" ", "%20"), ""))
    title = value.get("title")
    title = title.strip() if isinstance(title, str) and title.strip() else host
    return SearchSource(title=title, url=url)


class _Sources:
    """Stable first-seen order, deduplicated by URL (fragment removed), at most 20."""

    def __init__(self) -> None:
        self.items: list[SearchSource] = []
        self._seen: set[str] = set()

    def add(self, value: object) -> None:
        if len(self.items) >= SIDECAR_SOURCE_LIMIT:
            return
        source = _normalized_source(value)
        if source is None or source.url in self._seen:
            return
        self._seen.add(source.url)
        self.items.append(source)


def _usage(value: object) -> dict[str, int] | None:
    if not isinstance(value, dict):
        return None
    ints = {k: v for k, v in value.items() if isinstance(v, int) and not isinstance(v, bool)}
    if "input_tokens" not in ints and "output_tokens" not in ints:
        return None
    details = value.get("input_tokens_details")
    cached = details.get("cached_tokens") if isinstance(details, dict) else None
    cached = cached if isinstance(cached, int) and not isinstance(cached, bool) else 0
    input_tokens = ints.get("input_tokens", 0)
    output_tokens = ints.get("output_tokens", 0)
    return {
        "input": max(0, input_tokens - cached),
        "output": output_tokens,
        "cacheRead": cached,
        "cacheWrite": 0,
        "totalTokens": ints.get("total_tokens", input_tokens + output_tokens),
    }


def parse_output_items(items: Iterable[object], usage: object = None) -> _Parsed:
    """Answer and sources from completed output items (`web_search_call` + `message`)."""
    answer_parts: list[str] = []
    sources = _Sources()
    counts: dict[str, int] = {}
    search_calls = 0
    for item in items:
        if not isinstance(item, dict) or not isinstance(item.get("type"), str):
            continue
        kind = item["type"]
        counts[kind] = counts.get(kind, 0) + 1
        if kind == "web_search_call":
            search_calls += 1
            action = item.get("action")
            if isinstance(action, dict) and isinstance(action.get("sources"), list):
                for source in action["sources"]:
                    sources.add(source)
            continue
        if kind != "message" or not isinstance(item.get("content"), list):
            continue
        for content in item["content"]:
            if not isinstance(content, dict) or content.get("type") != "output_text":
                continue
            counts["output_text"] = counts.get("output_text", 0) + 1
            text = content.get("text")
            if isinstance(text, str) and text.strip():
                answer_parts.append(text.strip())
            annotations = content.get("annotations")
            if isinstance(annotations, list):
                for annotation in annotations:
                    if isinstance(annotation, dict) and annotation.get("type") == "url_citation":
                        sources.add(annotation)
    if search_calls == 0:
        raise SidecarError("missing-search-call")
    answer = "\n".join(answer_parts).strip()
    if not answer:
        raise SidecarError("missing-answer")
    return _Parsed(answer, sources.items, counts, _usage(usage))


def parse_response_json(value: object) -> _Parsed:
    """A non-streamed Responses object: it must be `completed` and carry `output`."""
    if not isinstance(value, dict) or value.get("status") != "completed":
        raise SidecarError("incomplete-response")
    output = value.get("output")
    if not isinstance(output, list):
        raise SidecarError("missing-search-call")
    return parse_output_items(output, value.get("usage"))


class _StreamCollector:
    """Aggregates `response.output_item.done` items until exactly one `response.completed`."""

    def __init__(self) -> None:
        self.items: list[JSONObject] = []
        self.completed: JSONObject | None = None

    def consume(self, event: JSONMapping) -> None:
        if self.completed is not None:  # anything after the terminal event is a protocol error
            raise SidecarError("incomplete-response")
        kind = event.get("type")
        if kind in ("error", "response.failed", "response.incomplete"):
            raise SidecarError("incomplete-response")
        if kind == "response.output_item.done":
            item = event.get("item")
            if isinstance(item, dict):
                self.items.append(item)
        elif kind == "response.completed":
            response = event.get("response")
            if not isinstance(response, dict) or response.get("status") != "completed":
                raise SidecarError("incomplete-response")
            self.completed = response

    def result(self) -> _Parsed:
        if self.completed is None:
            raise SidecarError("incomplete-response")
        return parse_output_items(self.items, self.completed.get("usage"))


def format_sidecar_text(answer: str, sources: list[SearchSource]) -> str:
    """`answer` plus a clickable Markdown source list (`[`/`]` escaped, `)` → `%29`)."""
    if not sources:
        return answer
    lines = []
    for source in sources:
        title = source.title.replace("[", "\\[").replace("]", "\\]")
        lines.append(f"- [{title}]({source.url.replace(')', '%29')})")
    return answer + "\n\nSources:\n" + "\n".join(lines)


def build_api_key_request(query: str, model_id: str, settings: SearchSettings) -> JSONObject:
    return {
        "model": model_id,
        "input": query,
        "tools": [web_search_tool_json(settings)],
        "tool_choice": "required",
        "include": [SOURCES_INCLUDE],
        "store": False,
    }


def _clamp_effort(model_id: str, effort: str) -> str:
    """Pi's Codex clamp: some models do not accept every effort level."""
    if model_id.startswith("gpt-5.1-codex-mini"):
        return "high" if effort in ("high", "xhigh") else "medium"
    if effort == "minimal" and any(
        model_id.startswith(p) for p in ("gpt-5.2", "gpt-5.3", "gpt-5.4")
    ):
        return "low"
    if effort == "xhigh" and model_id.startswith("gpt-5.1"):
        return "high"
    return effort


def build_codex_request(
    query: str, model_id: str, settings: SearchSettings, thinking_level: str
) -> JSONObject:
    """The body Pi's Codex provider would send, with the sidecar's search overrides."""
    body: JSONObject = {
        "model": model_id,
        "store": False,
        "stream": True,
        "instructions": SIDECAR_SYSTEM_PROMPT,
        "input": [{"role": "user", "content": [{"type": "input_text", "text": query}]}],
        "text": {"verbosity": "medium"},
        "include": ["reasoning.encrypted_content", SOURCES_INCLUDE],
        "tool_choice": "required",
        "parallel_tool_calls": True,
        "tools": [web_search_tool_json(settings)],
    }
    if thinking_level != "auto":
        effort = "none" if thinking_level == "off" else _clamp_effort(model_id, thinking_level)
        body["reasoning"] = {"effort": effort, "summary": "auto"}
    return body


@dataclass
class _Meta:
    status: int | None = None
    request_id: str | None = None


async def _read_stream(response: httpx.Response) -> _Parsed:
    import httpx

    decoder = SSEDecoder()
    collector = _StreamCollector()
    try:
        async for chunk in response.aiter_text():
            for event in decoder.feed(chunk):
                collector.consume(event)
        for event in decoder.flush():
            collector.consume(event)
    except SSEDecodeError:
        raise SidecarError("invalid-json") from None
    except httpx.TransportError:
        raise SidecarError("network-error") from None
    return collector.result()


async def _dispatch(
    client: httpx.AsyncClient,
    route: ResolvedRoute,
    query: str,
    settings: SearchSettings,
    thinking_level: str,
    meta: _Meta,
) -> _Parsed:
    import httpx

    url = RESPONSES_ENDPOINTS[route.credential_kind]
    headers = {"authorization": f"Bearer {route.token}", "content-type": "application/json"}
    if route.credential_kind == "codex-oauth":
        account = account_id_from_token(route.token)
        if not account:
            raise SidecarError("provider-unavailable")
        body = build_codex_request(query, route.model_id, settings, thinking_level)
        headers.update(
            {
                "chatgpt-account-id": account,
                "originator": "pi",
                "user-agent": USER_AGENT,
                "openai-beta": "responses=experimental",
                "accept": "text/event-stream",
                "session_id": str(uuid.uuid4()),
            }
        )
    else:
        if thinking_level != "auto":
            raise SidecarError("unsupported-sidecar-effort")
        body = build_api_key_request(query, route.model_id, settings)

    try:
        request = client.build_request("POST", url, json=body, headers=headers)
        response = await client.send(request, stream=True)
    except httpx.TransportError:
        raise SidecarError("network-error") from None
    try:
        meta.status = response.status_code
        meta.request_id = request_id(response)
        if not response.is_success:
            raise SidecarError("http-error")
        content_type = response.headers.get("content-type", "")
        if route.credential_kind == "codex-oauth" or "text/event-stream" in content_type:
            return await _read_stream(response)
        try:
            raw = await response.aread()
        except httpx.TransportError:
            raise SidecarError("network-error") from None
        try:
            value = json.loads(raw)
        except ValueError:
            raise SidecarError("invalid-json") from None
        return parse_response_json(value)
    finally:
        await response.aclose()


async def run_sidecar_search(
    query: str,
    route: ResolvedRoute,
    settings: SearchSettings,
    thinking_level: str = "auto",
    *,
    transport: httpx.AsyncBaseTransport | None = None,
    debug: DebugSink = DISABLED,
    timeout_s: float = SIDECAR_TIMEOUT_S,
) -> SidecarResult:
    """Run one sidecar search. Raises `SidecarError`; cancellation propagates as-is."""
    import httpx

    started = time.monotonic()
    meta = _Meta()

    def record(
        *, error_category: str | None = None, content_blocks: Mapping[str, int] | None = None
    ) -> DebugRecord:
        return DebugRecord(
            feature=FEATURE,
            provider=route.provider,
            api=route.api,
            model=route.model_id,
            endpoint_host=endpoint_host(RESPONSES_ENDPOINTS[route.credential_kind]),
            duration_ms=round((time.monotonic() - started) * 1000),
            status=meta.status,
            request_id=meta.request_id,
            error_category=error_category,
            content_blocks=content_blocks,
        )

    try:
        async with open_client(transport) as client, asyncio.timeout(timeout_s):
            parsed = await _dispatch(client, route, query, settings, thinking_level, meta)
    except TimeoutError:
        debug.emit(record(error_category="timeout"))
        raise SidecarError("timeout") from None
    except asyncio.CancelledError:
        debug.emit(record(error_category="aborted"))
        raise
    except SidecarError as error:
        debug.emit(record(error_category=error.category))
        raise
    except (httpx.HTTPError, OSError):
        debug.emit(record(error_category="network-error"))
        raise SidecarError("network-error") from None
    debug.emit(record(content_blocks=parsed.block_counts))
    return SidecarResult(
        answer=parsed.answer,
        sources=parsed.sources,
        text=format_sidecar_text(parsed.answer, parsed.sources),
        usage=parsed.usage,
    )
