"""The Toolkit's own tool definitions, by name, without building any executor.

`find_tools` searches descriptions of managed names even when this runtime has no live
tool for a name (for example a capability whose package is not wired in); the benchmark
measures `tools/list` sizes from the same definitions. Each capability's definition is
imported lazily from its own package, so this module stays the single place that knows
where they live, and a capability that fails to import only loses its own entry.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any, cast

from pct_runtime.capabilities.base import ToolSpec

_log = logging.getLogger(__name__)


def _web_search() -> list[ToolSpec]:
    # Deferred: a capability that fails to import loses only its own entry.
    from pct_runtime.capabilities.web_search.tool import web_search_spec

    return [web_search_spec()]


def _image() -> list[ToolSpec]:
    # Deferred: a capability that fails to import loses only its own entry.
    from pct_runtime.capabilities.image.tool import image_spec

    return [image_spec()]


def _apply_patch() -> list[ToolSpec]:
    # Deferred: a capability that fails to import loses only its own entry.
    from pct_runtime.capabilities.apply_patch.tool import apply_patch_spec

    return [apply_patch_spec()]


def _shell() -> list[ToolSpec]:
    # Deferred: a capability that fails to import loses only its own entry.
    from pct_runtime.capabilities.shell.tools import EXEC_COMMAND_SPEC, WRITE_STDIN_SPEC

    return [EXEC_COMMAND_SPEC, WRITE_STDIN_SPEC]


def _code() -> list[ToolSpec]:
    # Deferred: a capability that fails to import loses only its own entry.
    from pct_runtime.capabilities.code.tools import create_code_tools

    # The definitions do not depend on the manager; no manager is built or touched.
    return [tool.spec for tool in create_code_tools(cast(Any, None))]


def _computer_use() -> list[ToolSpec]:
    # Deferred: a capability that fails to import loses only its own entry.
    from pct_runtime.capabilities.computer_use.tools import METHODS, tool_spec

    return [tool_spec(method) for method in METHODS]


def _find_tools() -> list[ToolSpec]:
    # Deferred: a capability that fails to import loses only its own entry.
    from pct_runtime.capabilities.discovery.tool import find_tools_spec

    return [find_tools_spec()]


_SOURCES: tuple[Callable[[], list[ToolSpec]], ...] = (
    _web_search,
    _image,
    _apply_patch,
    _shell,
    _code,
    _computer_use,
    _find_tools,
)

_cache: dict[str, ToolSpec] | None = None


def toolkit_specs() -> dict[str, ToolSpec]:
    """Every Toolkit-owned tool definition by name, in registration order (cached)."""
    global _cache
    if _cache is None:
        specs: dict[str, ToolSpec] = {}
        for source in _SOURCES:
            try:
                for spec in source():
                    specs[spec.name] = spec
            except ImportError:
                _log.debug("tool definitions unavailable: %s", source.__name__, exc_info=True)
        _cache = specs
    return dict(_cache)


def default_description(name: str) -> str:
    """The Toolkit's description of `name`, or "" for a name it does not define."""
    spec = toolkit_specs().get(name)
    return spec.description if spec is not None else ""
