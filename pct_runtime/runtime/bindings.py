"""Every capability's binding into runtime sessions, and `default_bindings()`.

A binding names the tools a capability provides (its registry row's, so the two cannot
drift) and builds them for one session through the capability's descriptor
(`capabilities/registry.py`) from that session's `SessionContext`. Whether a tool is active
is decided by the decision layer; bindings never decide it.
"""

from __future__ import annotations

from collections.abc import Sequence

from pct_runtime.capabilities.base import CallableTool, Tool
from pct_runtime.capabilities.descriptor import Descriptor
from pct_runtime.capabilities.registry import descriptors
from pct_runtime.decide.registry import BY_KEY
from pct_runtime.runtime.context import CapabilityBinding, SessionContext


def default_bindings() -> list[CapabilityBinding]:
    """Bindings for every capability package present in this installation.

    Descriptors load on first use, so `pct` stays fast, and a capability that fails to
    import disables only itself (logged), never the runtime.
    """
    return [_binding(descriptor) for descriptor in descriptors()]


def _binding(descriptor: Descriptor) -> CapabilityBinding:
    def build(context: SessionContext) -> Sequence[Tool | CallableTool]:
        return descriptor.bind(context)

    return CapabilityBinding(descriptor.key, BY_KEY[descriptor.key].tools, build)
