"""Native Web Search: inject the hosted `web_search` tool into a Responses payload.

Used only by agents that embed the runtime (`before_provider_request`) and only when the
decision layer chose the native backend. The transform never mutates its input, keeps
unknown fields, is idempotent, and returns the payload unchanged when it cannot apply
(no decision, non-object payload, `tools`/`include` that are present but not arrays).
"""

from __future__ import annotations

from typing import Protocol

from pct_runtime.jsontypes import JSONObject

SOURCES_INCLUDE = "web_search_call.action.sources"


class SearchSettings(Protocol):
    """The two config values both search paths use (`ToolkitConfig.web_search` fits)."""

    @property
    def mode(self) -> str: ...  # "live" | "cached"

    @property
    def context_size(self) -> str: ...  # "low" | "medium" | "high"


def web_search_tool_json(settings: SearchSettings) -> JSONObject:
    """The hosted tool object: `cached` means no external web access."""
    return {
        "type": "web_search",
        "search_context_size": settings.context_size,
        "external_web_access": settings.mode == "live",
    }


def inject_native_search(payload: object, config: SearchSettings | None) -> object:
    """Return `payload` with native web search added, or `payload` itself when inapplicable.

    `config` is None when the native backend is not the decision for this turn. An existing
    `web_search` tool keeps its own fields (ours only fill missing keys); later duplicate
    `web_search` tools are dropped; the sources include is added once; `tool_choice` is set
    to `auto` only when the payload has none. Applying it twice equals applying it once.
    """
    if config is None or not isinstance(payload, dict):
        return payload
    tools_in = payload.get("tools", [])
    include_in = payload.get("include", [])
    if not isinstance(tools_in, list) or not isinstance(include_in, list):
        return payload

    ours = web_search_tool_json(config)
    tools: list[object] = []
    found = False
    for tool in tools_in:
        if isinstance(tool, dict) and tool.get("type") == "web_search":
            if found:
                continue
            found = True
            tools.append({**ours, **tool})
        else:
            tools.append(tool)
    if not found:
        tools.append(ours)

    include = list(include_in)
    if SOURCES_INCLUDE not in include:
        include.append(SOURCES_INCLUDE)

    result = {**payload, "tools": tools, "include": include}
    if "tool_choice" not in payload:
        result["tool_choice"] = "auto"
    return payload if result == payload else result
