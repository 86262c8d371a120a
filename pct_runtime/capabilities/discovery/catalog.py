"""The Toolkit's own tool definitions, by name, without building any executor.

`find_tools` searches descriptions of managed names even when this runtime has no live
tool for a name (for example a capability whose package is not wired in); the benchmark
measures `tools/list` sizes from the same definitions. The definitions come from each
capability's descriptor (`capabilities/table.py`, loaded on first use), so a
capability that fails to import only loses its own entry.
"""

from __future__ import annotations

from pct_runtime.capabilities.base import ToolSpec
from pct_runtime.capabilities.table import descriptors

_cache: dict[str, ToolSpec] | None = None


def toolkit_specs() -> dict[str, ToolSpec]:
    """Every Toolkit-owned tool definition by name, in registration order (cached)."""
    global _cache
    if _cache is None:
        _cache = {spec.name: spec for d in descriptors() for spec in d.specs()}
    return dict(_cache)


def default_description(name: str) -> str:
    """The Toolkit's description of `name`, or "" for a name it does not define."""
    spec = toolkit_specs().get(name)
    return spec.description if spec is not None else ""
