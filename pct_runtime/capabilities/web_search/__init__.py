"""Web Search: the native payload transform and the `openai_web_search` sidecar tool."""

from __future__ import annotations

from typing import TYPE_CHECKING

from pct_runtime import lazy

if TYPE_CHECKING:
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

# Names load on first use: `pct status` imports this package for its declaration
# (`declaration.py`), which needs none of them.
_HOME: dict[str, str] = {
    "OpenAIWebSearchTool": "pct_runtime.capabilities.web_search.tool",
    "SIDECAR_SOURCE_LIMIT": "pct_runtime.capabilities.web_search.sidecar",
    "SIDECAR_TIMEOUT_S": "pct_runtime.capabilities.web_search.sidecar",
    "SOURCES_INCLUDE": "pct_runtime.capabilities.web_search.native",
    "SearchSettings": "pct_runtime.capabilities.web_search.native",
    "SearchSource": "pct_runtime.capabilities.web_search.sidecar",
    "SidecarError": "pct_runtime.capabilities.web_search.sidecar",
    "SidecarResult": "pct_runtime.capabilities.web_search.sidecar",
    "WEB_SEARCH_TOOL_NAME": "pct_runtime.capabilities.web_search.tool",
    "format_sidecar_text": "pct_runtime.capabilities.web_search.sidecar",
    "inject_native_search": "pct_runtime.capabilities.web_search.native",
    "run_sidecar_search": "pct_runtime.capabilities.web_search.sidecar",
    "web_search_spec": "pct_runtime.capabilities.web_search.tool",
    "web_search_tool_json": "pct_runtime.capabilities.web_search.native",
}

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


__getattr__ = lazy.exports(__name__, _HOME)
