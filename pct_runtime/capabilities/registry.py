"""The capability registry's package table: where each capability's descriptor lives.

The only module that imports the descriptor modules (`capabilities/<name>/descriptor.py`,
and the OpenAI seam for the tools it assembles). It imports them on first use, in the
order sessions bind their tools: `pct` starts without loading any capability, and one
that fails to import disables only itself (logged), never the catalog or the runtime.
"""

from __future__ import annotations

import importlib
import logging
from typing import TYPE_CHECKING, Protocol

from pct_runtime.capabilities.descriptor import Descriptor

if TYPE_CHECKING:
    from pct_runtime.capabilities.apply_patch.descriptor import PatchServices
    from pct_runtime.capabilities.code.descriptor import CodeServices
    from pct_runtime.capabilities.computer_use.descriptor import ComputerUseServices
    from pct_runtime.capabilities.discovery.descriptor import DiscoveryServices
    from pct_runtime.capabilities.openai.factory import OpenAIServices
    from pct_runtime.capabilities.shell.descriptor import ShellServices

    class CapabilityServices(
        PatchServices,
        ShellServices,
        CodeServices,
        DiscoveryServices,
        OpenAIServices,
        ComputerUseServices,
        Protocol,
    ):
        """Everything any binding asks of a session: the runtime's port implements it."""


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

_loaded: tuple[Descriptor[CapabilityServices], ...] | None = None


def descriptors() -> tuple[Descriptor[CapabilityServices], ...]:
    """Every importable capability's descriptor, in binding order (loaded once)."""
    global _loaded
    if _loaded is None:
        found: list[Descriptor[CapabilityServices]] = []
        for name in DESCRIPTOR_MODULES:
            try:
                module = importlib.import_module(name)
            except ImportError:
                _log.debug("capability not installed: %s", name, exc_info=True)
                continue
            found.extend(d for d in module.DESCRIPTORS if isinstance(d, Descriptor))
        _loaded = tuple(found)
    return _loaded
