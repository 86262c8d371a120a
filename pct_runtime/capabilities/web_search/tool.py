"""The `openai_web_search` tool: validates `{query}` and runs one sidecar search.

Whether the tool is active is decided elsewhere; this object is only built when the
sidecar backend was chosen. It resolves its executor route on every call (so OAuth is
refreshed and the route re-checked right before the request) and never falls back.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING

from pct_runtime.capabilities.base import CallContext, SimpleTool, ToolError, ToolResult, ToolSpec
from pct_runtime.capabilities.openai.routes import ResolvedRoute, RouteUnavailable, route_problem
from pct_runtime.capabilities.web_search.native import SearchSettings
from pct_runtime.capabilities.web_search.sidecar import SidecarError, run_sidecar_search
from pct_runtime.debug import DISABLED, DebugSink
from pct_runtime.jsontypes import JSONMapping, JSONObject

if TYPE_CHECKING:  # annotations only: httpx (and the rich it loads) is imported on first use
    import httpx

WEB_SEARCH_TOOL_NAME = "openai_web_search"
WEB_SEARCH_DESCRIPTION = (
    "Search the web through the configured OpenAI Responses sidecar and return an answer "
    "with sources."
)

RouteResolver = Callable[[], Awaitable[ResolvedRoute]]
#: Pi's usage names → the snake_case spelling every result detail uses.
_SNAKE = {"cacheRead": "cache_read", "cacheWrite": "cache_write", "totalTokens": "total_tokens"}


def web_search_spec() -> ToolSpec:
    return ToolSpec(
        name=WEB_SEARCH_TOOL_NAME,
        label="OpenAI Web Search",
        description=WEB_SEARCH_DESCRIPTION,
        input_schema={
            "type": "object",
            "properties": {
                "query": {
                    "type": "string",
                    "minLength": 1,
                    "description": "The search query, written by the model.",
                }
            },
            "required": ["query"],
            "additionalProperties": False,
        },
    )


def _validated_query(args: JSONMapping) -> str:
    unknown = sorted(k for k in args if k != "query")
    if unknown:
        raise ToolError(
            "invalid-arguments",
            f"openai_web_search accepts only `query`; remove: {', '.join(unknown)}.",
        )
    query = args.get("query")
    if not isinstance(query, str) or not query.strip():
        raise ToolError(
            "invalid-arguments", "openai_web_search requires a non-empty `query` string."
        )
    return query


class OpenAIWebSearchTool(SimpleTool):
    """`resolve_route` returns the selected executor's route with a fresh credential, or
    raises `RouteUnavailable(reason)`; `settings` supplies `mode` and `context_size`."""

    def __init__(
        self,
        *,
        resolve_route: RouteResolver,
        settings: Callable[[], SearchSettings],
        thinking_level: Callable[[], str] = lambda: "auto",
        debug: DebugSink = DISABLED,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        self._resolve_route = resolve_route
        self._settings = settings
        self._thinking_level = thinking_level
        self._debug = debug
        self._transport = transport
        self._spec = web_search_spec()

    @property
    def spec(self) -> ToolSpec:
        return self._spec

    async def __call__(self, args: JSONMapping, ctx: CallContext) -> ToolResult:
        query = _validated_query(args)
        try:
            route = await self._resolve_route()
        except RouteUnavailable as exc:
            raise ToolError(
                "unavailable", f"OpenAI Web Search is unavailable: {exc.reason}."
            ) from None
        problem = route_problem(route)
        if problem is not None:
            raise ToolError("unavailable", f"OpenAI Web Search is unavailable: {problem}.")
        try:
            result = await run_sidecar_search(
                query,
                route,
                self._settings(),
                self._thinking_level(),
                transport=self._transport,
                debug=self._debug,
            )
        except SidecarError as error:
            raise ToolError(error.category, str(error)) from None
        details: JSONObject = {
            "answer": result.answer,
            "sources": [{"title": s.title, "url": s.url} for s in result.sources],
        }
        if result.usage is not None:
            details["usage"] = {_SNAKE.get(k, k): v for k, v in result.usage.items()}
        return ToolResult(text=result.text, details=details)
