"""Tool Discovery: the `find_tools` tool (query and load of managed deferred names).

Eligibility is not decided here: the runtime supplies a `DiscoveryBackend` built over
the decision layer (`pct_runtime.decide.discovery`), so the same rules drive the
projection, status and every `find_tools` answer.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pct_runtime import lazy

if TYPE_CHECKING:
    from pct_runtime.capabilities.discovery.catalog import (
        default_description,
        toolkit_specs,
    )
    from pct_runtime.capabilities.discovery.search import (
        MAX_MATCHES,
        SUMMARY_LIMIT,
        CatalogEntry,
        Match,
        summarize,
    )
    from pct_runtime.capabilities.discovery.tool import (
        FIND_TOOLS_NAME,
        LOAD_HINT_TEXT,
        MISSING_ARGUMENTS_TEXT,
        NO_MATCHES_TEXT,
        NOT_ENABLED_TEXT,
        STATE_ACTIVE,
        STATE_ELIGIBLE,
        UNAVAILABLE_PREFIX,
        DiscoveryBackend,
        FindToolsTool,
        LoadOutcome,
        find_tools_spec,
        format_load,
        format_matches,
        validate_arguments,
    )

# `search` shares its name with its module, which importing any submodule binds here:
# imported now (stdlib only), so the name is the function.
from pct_runtime.capabilities.discovery.search import search

# Names load on first use: `pct status` imports this package for its declaration
# (`declaration.py`), which needs none of them.
_HOME: dict[str, str] = {
    "CatalogEntry": "pct_runtime.capabilities.discovery.search",
    "DiscoveryBackend": "pct_runtime.capabilities.discovery.tool",
    "FIND_TOOLS_NAME": "pct_runtime.capabilities.discovery.tool",
    "FindToolsTool": "pct_runtime.capabilities.discovery.tool",
    "LOAD_HINT_TEXT": "pct_runtime.capabilities.discovery.tool",
    "LoadOutcome": "pct_runtime.capabilities.discovery.tool",
    "MAX_MATCHES": "pct_runtime.capabilities.discovery.search",
    "MISSING_ARGUMENTS_TEXT": "pct_runtime.capabilities.discovery.tool",
    "Match": "pct_runtime.capabilities.discovery.search",
    "NOT_ENABLED_TEXT": "pct_runtime.capabilities.discovery.tool",
    "NO_MATCHES_TEXT": "pct_runtime.capabilities.discovery.tool",
    "STATE_ACTIVE": "pct_runtime.capabilities.discovery.tool",
    "STATE_ELIGIBLE": "pct_runtime.capabilities.discovery.tool",
    "SUMMARY_LIMIT": "pct_runtime.capabilities.discovery.search",
    "UNAVAILABLE_PREFIX": "pct_runtime.capabilities.discovery.tool",
    "default_description": "pct_runtime.capabilities.discovery.catalog",
    "find_tools_spec": "pct_runtime.capabilities.discovery.tool",
    "format_load": "pct_runtime.capabilities.discovery.tool",
    "format_matches": "pct_runtime.capabilities.discovery.tool",
    "summarize": "pct_runtime.capabilities.discovery.search",
    "toolkit_specs": "pct_runtime.capabilities.discovery.catalog",
    "validate_arguments": "pct_runtime.capabilities.discovery.tool",
}

__all__ = [
    "FIND_TOOLS_NAME",
    "LOAD_HINT_TEXT",
    "MAX_MATCHES",
    "MISSING_ARGUMENTS_TEXT",
    "NOT_ENABLED_TEXT",
    "NO_MATCHES_TEXT",
    "STATE_ACTIVE",
    "STATE_ELIGIBLE",
    "SUMMARY_LIMIT",
    "UNAVAILABLE_PREFIX",
    "CatalogEntry",
    "DiscoveryBackend",
    "FindToolsTool",
    "LoadOutcome",
    "Match",
    "default_description",
    "find_tools_spec",
    "format_load",
    "format_matches",
    "search",
    "summarize",
    "toolkit_specs",
    "validate_arguments",
]


__getattr__ = lazy.exports(__name__, _HOME)
