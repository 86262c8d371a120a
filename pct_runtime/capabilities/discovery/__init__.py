"""Tool Discovery: the `find_tools` tool (query and load of managed deferred names).

Eligibility is not decided here: the runtime supplies a `DiscoveryBackend` built over
the decision layer (`pct_runtime.decide.discovery`), so the same rules drive the
projection, status and every `find_tools` answer.
"""

from __future__ import annotations

from pct_runtime.capabilities.discovery.catalog import default_description, toolkit_specs
from pct_runtime.capabilities.discovery.search import (
    MAX_MATCHES,
    SUMMARY_LIMIT,
    CatalogEntry,
    Match,
    search,
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
