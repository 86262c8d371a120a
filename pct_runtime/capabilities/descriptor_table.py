"""The capability registry's package table: where each capability's descriptor lives.

The only module that imports the descriptor modules (`capabilities/<name>/descriptor.py`,
and the OpenAI seam for the tools it assembles). It imports them on first use, in the
order sessions bind their tools: `pct` starts without loading any capability, and one
that fails to import disables only itself (logged), never the catalog or the runtime.
"""

from __future__ import annotations

import importlib
import logging

from pct_runtime.capabilities.descriptor import Descriptor

_log = logging.getLogger(__name__)

#: Descriptor modules, in binding order (each exports `DESCRIPTORS`).
DESCRIPTOR_MODULES: tuple[str, ...] = (
    "pct_runtime.capabilities.apply_patch.descriptor",
    "pct_runtime.capabilities.shell.descriptor",
    "pct_runtime.capabilities.code.descriptor",
    "pct_runtime.capabilities.discovery.descriptor",
    "pct_runtime.capabilities.openai.factory",
    "pct_runtime.capabilities.computer_use.descriptor",
)

#: The descriptor modules whose descriptors declare a host probe. `pct status` plans
#: without binding any tool, so it loads only these (start-up time); a test keeps this
#: equal to the descriptors that have a `probe`.
HOST_PROBE_MODULES: tuple[str, ...] = ("pct_runtime.capabilities.computer_use.descriptor",)

_loaded: tuple[Descriptor, ...] | None = None


def _load(name: str) -> list[Descriptor]:
    try:
        module = importlib.import_module(name)
    except ImportError:
        _log.debug("capability not installed: %s", name, exc_info=True)
        return []
    return [d for d in module.DESCRIPTORS if isinstance(d, Descriptor)]


def descriptors() -> tuple[Descriptor, ...]:
    """Every importable capability's descriptor, in binding order (loaded once)."""
    global _loaded
    if _loaded is None:
        _loaded = tuple(d for name in DESCRIPTOR_MODULES for d in _load(name))
    return _loaded


def host_probes() -> tuple[Descriptor, ...]:
    """The descriptors that declare a host probe, loading no other capability."""
    if _loaded is not None:
        return tuple(d for d in _loaded if d.probe is not None)
    return tuple(d for name in HOST_PROBE_MODULES for d in _load(name) if d.probe is not None)
