"""The capability list: every capability's declaration, in status order, and its bindings.

The one module that names every capability package on purpose. Each package declares
itself in its `declaration.py` (a `decide.rows.CapabilityRow`: title, tool names,
refusals, status lines, planner, load group, menu items, what a plan keeps, where its
binding lives); this list imports those light modules only, so `pct status` reads it
without loading any tool. The descriptor modules (the bindings) are imported on first
use, in binding order, and one that fails to import disables only itself (logged), never
the catalog or the runtime. Status, the projection, discovery, refusals, the runtime's
bindings and the console's menu read this list instead of naming a capability.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

from pct_runtime.capabilities.apply_patch.declaration import ROW as APPLY_PATCH
from pct_runtime.capabilities.code.declaration import ROW as CODE
from pct_runtime.capabilities.compaction.declaration import ROW as COMPACTION
from pct_runtime.capabilities.computer_use.declaration import ROW as COMPUTER_USE
from pct_runtime.capabilities.discovery.declaration import ROW as DISCOVERY
from pct_runtime.capabilities.image.declaration import ROW as IMAGE
from pct_runtime.capabilities.shell.declaration import ROW as SHELL
from pct_runtime.capabilities.web_search.declaration import ROW as WEB_SEARCH
from pct_runtime.decide.rows import CapabilityRow, by_key, by_tool

if TYPE_CHECKING:  # the descriptor record loads with the first binding: a status reads none
    from pct_runtime.capabilities.descriptor import Descriptor, HostProbe

#: Every capability, in the order `/pct status` prints its block (the status text is pinned
#: byte for byte, so this order is part of it).
CAPABILITIES: tuple[CapabilityRow, ...] = (
    WEB_SEARCH,
    COMPACTION,
    IMAGE,
    APPLY_PATCH,
    COMPUTER_USE,
    SHELL,
    CODE,
    DISCOVERY,
)
#: The rows in the order the console's `/pct config` menu lists their items.
MENU_ROWS: tuple[CapabilityRow, ...] = (
    WEB_SEARCH,
    COMPACTION,
    IMAGE,
    COMPUTER_USE,
    APPLY_PATCH,
    SHELL,
    CODE,
    DISCOVERY,
)
#: The rows in the order a session binds their tools (cleanups run in reverse, so Code
#: Mode closes before the shell manager its cells drive).
BINDING_ROWS: tuple[CapabilityRow, ...] = (
    APPLY_PATCH,
    SHELL,
    CODE,
    DISCOVERY,
    WEB_SEARCH,
    IMAGE,
    COMPUTER_USE,
)
#: The rows by decision key (the runtime's bindings take their tool names from here).
BY_KEY: dict[str, CapabilityRow] = by_key(CAPABILITIES)
#: The row that owns each tool name.
BY_TOOL: dict[str, CapabilityRow] = by_tool(CAPABILITIES)

_modules: dict[str, tuple[Descriptor, ...]] = {}
_loaded: tuple[Descriptor, ...] | None = None
_probes: dict[str, HostProbe] | None = None


def _load(name: str) -> tuple[Descriptor, ...]:
    if name not in _modules:
        from pct_runtime.capabilities.descriptor import Descriptor

        try:
            module = importlib.import_module(name)
        except ImportError:
            import logging

            logging.getLogger(__name__).debug("capability not installed: %s", name, exc_info=True)
            found: tuple[Descriptor, ...] = ()
        else:
            found = tuple(d for d in module.DESCRIPTORS if isinstance(d, Descriptor))
        _modules[name] = found
    return _modules[name]


def _descriptors_of(row: CapabilityRow) -> tuple[Descriptor, ...]:
    if row.binding is None:
        return ()
    return tuple(d for d in _load(row.binding) if d.key == row.key)


def descriptors() -> tuple[Descriptor, ...]:
    """Every importable capability's descriptor, in binding order (loaded once)."""
    global _loaded
    if _loaded is None:
        _loaded = tuple(d for row in BINDING_ROWS for d in _descriptors_of(row))
    return _loaded


def host_probes() -> dict[str, HostProbe]:
    """Each row's host probe by key (its `probe` module's `PROBE`), loading no binding.

    A probe module that fails to import disables only its verdict (logged), as a binding
    that fails to import disables only its capability."""
    global _probes
    if _probes is None:
        found: dict[str, HostProbe] = {}
        for row in CAPABILITIES:
            if row.probe is None:
                continue
            try:
                found[row.key] = importlib.import_module(row.probe).PROBE
            except ImportError:
                import logging

                logging.getLogger(__name__).debug(
                    "host probe not installed: %s", row.probe, exc_info=True
                )
        _probes = found
    return _probes
