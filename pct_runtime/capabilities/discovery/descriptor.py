"""Tool Discovery's descriptor: `find_tools` over the session's discovery backend."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from pct_runtime.capabilities.base import Tool, ToolSpec
from pct_runtime.capabilities.descriptor import Descriptor
from pct_runtime.capabilities.discovery.tool import DiscoveryBackend, FindToolsTool, find_tools_spec


class DiscoveryServices(Protocol):
    """What the `find_tools` binding asks of its session."""

    def discovery(self) -> DiscoveryBackend:
        """Eligibility and loads over the decision layer, for this session."""
        ...


def _specs() -> Sequence[ToolSpec]:
    return [find_tools_spec()]


def _bind(services: DiscoveryServices) -> Sequence[Tool]:
    return [FindToolsTool(services.discovery())]


DESCRIPTORS: tuple[Descriptor[DiscoveryServices], ...] = (
    Descriptor("tool_discovery", _specs, _bind),
)
