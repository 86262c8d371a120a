"""Tool Discovery's descriptor: `find_tools` over the session's discovery answers."""

from __future__ import annotations

from collections.abc import Sequence

from pct_runtime.capabilities.base import Tool, ToolSpec
from pct_runtime.capabilities.context import CapabilityContext, SessionCatalog
from pct_runtime.capabilities.descriptor import Descriptor
from pct_runtime.capabilities.discovery.catalog import default_description
from pct_runtime.capabilities.discovery.search import CatalogEntry
from pct_runtime.capabilities.discovery.tool import FindToolsTool, LoadOutcome, find_tools_spec


class _Backend:
    """The `DiscoveryBackend` `find_tools` reads, over a session's plain answers."""

    def __init__(self, session: SessionCatalog) -> None:
        self._session = session

    def available(self) -> bool:
        return self._session.available()

    def catalog(self) -> Sequence[CatalogEntry]:
        return tuple(
            CatalogEntry(name, default_description(name) if own is None else own, state)
            for name, own, state in self._session.catalog()
        )

    async def load(self, names: Sequence[str]) -> LoadOutcome:
        loaded, rejected = await self._session.load(names)
        return LoadOutcome(loaded, rejected)


def _specs() -> Sequence[ToolSpec]:
    return [find_tools_spec()]


def _bind(context: CapabilityContext) -> Sequence[Tool]:
    return [FindToolsTool(_Backend(context.discovery()))]


DESCRIPTORS: tuple[Descriptor, ...] = (Descriptor("tool_discovery", _specs, _bind),)
