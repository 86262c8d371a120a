"""Web Search: the native payload transform and the `openai_web_search` sidecar tool."""

from pct_runtime.capabilities.web_search.native import (
    SOURCES_INCLUDE,
    SearchSettings,
    inject_native_search,
    web_search_tool_json,
)
from pct_runtime.capabilities.web_search.sidecar import (
    SIDECAR_SOURCE_LIMIT,
    SIDECAR_TIMEOUT_S,
    SearchSource,
    SidecarError,
    SidecarResult,
    format_sidecar_text,
    run_sidecar_search,
)
from pct_runtime.capabilities.web_search.tool import (
    WEB_SEARCH_TOOL_NAME,
    OpenAIWebSearchTool,
    web_search_spec,
)

__all__ = [
    "SIDECAR_SOURCE_LIMIT",
    "SIDECAR_TIMEOUT_S",
    "SOURCES_INCLUDE",
    "WEB_SEARCH_TOOL_NAME",
    "OpenAIWebSearchTool",
    "SearchSettings",
    "SearchSource",
    "SidecarError",
    "SidecarResult",
    "format_sidecar_text",
    "inject_native_search",
    "run_sidecar_search",
    "web_search_spec",
    "web_search_tool_json",
]
