"""The `find_tools` tool: search the managed (deferred) Toolkit tools and load them.

The tool never decides eligibility itself: a `DiscoveryBackend` (the runtime, over the
decision layer) answers "what is each managed name's state now?" and "load these names",
rechecking every name at every call. This module validates arguments before anything
happens, runs the load and/or the query, and renders fixed texts (`No matching managed tools.`,
`Matches (<n>):`, `Loaded: ...`, `Rejected:`) the model can rely on from call to call.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from pct_runtime.capabilities.base import CallContext, SimpleTool, ToolError, ToolResult, ToolSpec
from pct_runtime.capabilities.discovery.search import (
    MAX_MATCHES,
    SUMMARY_LIMIT,
    CatalogEntry,
    Match,
    search,
)
from pct_runtime.jsontypes import JSONMapping, JSONObject

FIND_TOOLS_NAME = "find_tools"

MISSING_ARGUMENTS_TEXT = "find_tools requires a query or a non-empty load list."
NOT_ENABLED_TEXT = "Tool discovery is not enabled."
NO_MATCHES_TEXT = "No matching managed tools."
LOAD_HINT_TEXT = "Load eligible matches to expose them on the next turn."

STATE_ACTIVE = "active"
STATE_ELIGIBLE = "eligible"
UNAVAILABLE_PREFIX = "unavailable: "

FIND_TOOLS_DESCRIPTION = (
    "Search and load Toolkit tools this session hides until needed (image generation, web "
    "search, Computer Use, shell, code, patch).\n"
    f"- `query`: words matched against the hidden tools' names and descriptions; returns up "
    f"to {MAX_MATCHES} lines `- <name> [<state>] <summary>`, state `active` (callable now), "
    "`eligible` (load it first) or `unavailable: <reason>`.\n"
    "- `load`: exact names to expose from your next turn on; additive, runs nothing; names "
    "that cannot load come back under `Rejected:` with the reason. Any Computer Use name "
    "loads all six.\n"
    "Give `query`, `load` or both (the load runs first)."
)

FIND_TOOLS_SCHEMA: JSONMapping = {
    "type": "object",
    "properties": {
        "query": {
            "type": "string",
            "minLength": 1,
            "description": "Words to search the hidden tools' names and descriptions.",
        },
        "load": {
            "type": "array",
            "items": {"type": "string", "minLength": 1},
            "minItems": 1,
            "uniqueItems": True,
            "description": "Exact tool names to load for the next turn.",
        },
    },
    # "One of query/load is required" is checked at call time with the exact text: a
    # top-level anyOf is rejected by some function-calling APIs.
    "additionalProperties": False,
}


def find_tools_spec() -> ToolSpec:
    return ToolSpec(
        name=FIND_TOOLS_NAME,
        label="Find Tools",
        description=FIND_TOOLS_DESCRIPTION,
        input_schema=FIND_TOOLS_SCHEMA,
        sequential=True,
    )


@dataclass(frozen=True)
class LoadOutcome:
    """`loaded`: names now exposed (already-active ones included: loading is idempotent);
    `rejected`: `(name, reason)` pairs in request order (an atomic group's members each
    carry the group's reason)."""

    loaded: tuple[str, ...] = ()
    rejected: tuple[tuple[str, str], ...] = ()


class DiscoveryBackend(Protocol):
    """What `find_tools` needs from the runtime; every method reads the state *now*."""

    def available(self) -> bool:
        """The loader is available: discovery enabled and `find_tools` owned."""
        ...

    def catalog(self) -> Sequence[CatalogEntry]:
        """Every managed name, in canonical order, with description and current state."""
        ...

    async def load(self, names: Sequence[str]) -> LoadOutcome:
        """Recheck and load `names` for the next turn (re-syncing the session)."""
        ...


@dataclass(frozen=True)
class FindToolsRequest:
    query: str | None
    load: tuple[str, ...]


def _invalid(text: str) -> ToolError:
    return ToolError("invalid-arguments", text)


def validate_arguments(args: JSONMapping) -> FindToolsRequest:
    """Check the arguments against the schema before anything runs.

    JSON `null` counts as an omitted field (clients often send it for optional fields).
    """
    unknown = sorted(key for key in args if key not in ("query", "load"))
    if unknown:
        raise _invalid(f"find_tools accepts only `query` and `load`; remove: {', '.join(unknown)}.")
    query = args.get("query")
    load = args.get("load")
    if query is not None and (not isinstance(query, str) or not query.strip()):
        raise _invalid("find_tools `query` must be a non-empty string.")
    if load is not None:
        if not isinstance(load, list):
            raise _invalid("find_tools `load` must be an array of exact tool names.")
        if not load and query is not None:
            raise _invalid("find_tools `load` must list at least one tool name, or be omitted.")
        for item in load:
            if not isinstance(item, str) or not item:
                raise _invalid("find_tools `load` entries must be non-empty tool-name strings.")
        repeated = sorted({name for name in load if load.count(name) > 1})
        if repeated:
            raise _invalid(f"find_tools `load` lists a name twice: {', '.join(repeated)}.")
    if query is None and not load:
        raise _invalid(MISSING_ARGUMENTS_TEXT)
    return FindToolsRequest(query, tuple(load or ()))


def format_matches(matches: Sequence[Match]) -> str:
    """`Matches (<n>):` + `- <name> [<state>] <summary>` lines, and the load hint when a
    match is eligible; `No matching managed tools.` when none matched."""
    if not matches:
        return NO_MATCHES_TEXT
    lines = [f"Matches ({len(matches)}):"]
    for match in matches:
        line = f"- {match.name} [{match.state}]"
        lines.append(f"{line} {match.summary}" if match.summary else line)
    if any(match.state == STATE_ELIGIBLE for match in matches):
        lines.append(LOAD_HINT_TEXT)
    return "\n".join(lines)


def format_load(outcome: LoadOutcome) -> str:
    """`Loaded: a, b` and/or `Rejected:` + `- <name>: <reason>` lines."""
    parts: list[str] = []
    if outcome.loaded:
        parts.append(f"Loaded: {', '.join(outcome.loaded)}")
    if outcome.rejected:
        parts.append(
            "\n".join(["Rejected:", *(f"- {name}: {reason}" for name, reason in outcome.rejected)])
        )
    return "\n".join(parts)


class FindToolsTool(SimpleTool):
    """`find_tools` over one session's `DiscoveryBackend`."""

    def __init__(self, backend: DiscoveryBackend) -> None:
        self._backend = backend
        self._spec = find_tools_spec()

    @property
    def spec(self) -> ToolSpec:
        return self._spec

    async def __call__(self, args: JSONMapping, ctx: CallContext) -> ToolResult:
        request = validate_arguments(args)
        if not self._backend.available():
            raise ToolError("not-enabled", NOT_ENABLED_TEXT)
        sections: list[str] = []
        details: JSONObject = {}
        if request.load:
            outcome = await self._backend.load(request.load)
            sections.append(format_load(outcome))
            details["loaded"] = list(outcome.loaded)
            details["rejected"] = [
                {"name": name, "reason": reason} for name, reason in outcome.rejected
            ]
        if request.query is not None:
            matches = search(request.query, self._backend.catalog())
            sections.append(format_matches(matches))
            details["matches"] = [
                {"name": m.name, "state": m.state, "summary": m.summary} for m in matches
            ]
        return ToolResult("\n\n".join(sections), details)


__all__ = [
    "FIND_TOOLS_DESCRIPTION",
    "FIND_TOOLS_NAME",
    "FIND_TOOLS_SCHEMA",
    "LOAD_HINT_TEXT",
    "MISSING_ARGUMENTS_TEXT",
    "NOT_ENABLED_TEXT",
    "NO_MATCHES_TEXT",
    "STATE_ACTIVE",
    "STATE_ELIGIBLE",
    "SUMMARY_LIMIT",
    "UNAVAILABLE_PREFIX",
    "DiscoveryBackend",
    "FindToolsRequest",
    "FindToolsTool",
    "LoadOutcome",
    "find_tools_spec",
    "format_load",
    "format_matches",
    "validate_arguments",
]
