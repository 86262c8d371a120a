"""What the `find_tools` binding asks of its session (apart from the descriptor module,
which imports the catalog: the registry types its services from here without a cycle)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol


class SessionCatalog(Protocol):
    """A session's discovery answers over the decision layer, as plain data."""

    def available(self) -> bool: ...

    def catalog(self) -> Sequence[tuple[str, str | None, str]]:
        """Every managed name in canonical order: (name, the session's own description or
        None for the Toolkit's definition, state)."""
        ...

    async def load(
        self, names: Sequence[str]
    ) -> tuple[tuple[str, ...], tuple[tuple[str, str], ...]]:
        """Recheck and load `names` (re-syncing the session): (loaded, (name, reason)...)."""
        ...


class DiscoveryServices(Protocol):
    """What the `find_tools` binding asks of its session."""

    def discovery(self) -> SessionCatalog:
        """Eligibility and loads over the decision layer, for this session."""
        ...
