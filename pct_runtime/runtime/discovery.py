"""`find_tools` for one runtime session: its answers over the decision layer.

Plain data (names, descriptions, states, reasons): the Tool Discovery descriptor turns
them into the `find_tools` backend, so the runtime names no capability type. Every call
plans the session's projection afresh (uncommitted) and asks the decision layer
(`pct_runtime.decide.discovery`) for each managed name's state or load verdict, so
eligibility is rechecked per name at every call. A successful load records the names in
the session's `discovered` set (never persisted: a new session starts with none) and
re-syncs the session, which changes its `tools/list` and notifies MCP clients.
"""

from __future__ import annotations

from collections.abc import Sequence

from pct_runtime.decide.discovery import discovery_state, load_names
from pct_runtime.decide.projection import ProjectionPlan
from pct_runtime.runtime.services import SessionServices


class SessionDiscovery:
    """Implements the descriptor's `SessionCatalog` over a session's `SessionServices`."""

    def __init__(self, services: SessionServices) -> None:
        self._services = services

    def _plan(self) -> ProjectionPlan | None:
        plan: ProjectionPlan | None = self._services.plan_now()
        return plan

    def available(self) -> bool:
        plan = self._plan()
        return plan is not None and plan.loader_available

    def _describe(self, name: str, plan: ProjectionPlan) -> str | None:
        """Our own tool's description; never a foreign winner's (discovery manages only
        Toolkit-owned tools). None: the Toolkit's definition of the name applies."""
        return self._services.describe(name) if plan.tools.owned(name, plan.identity) else None

    def catalog(self) -> Sequence[tuple[str, str | None, str]]:
        plan = self._plan()
        if plan is None:
            return ()
        return tuple(
            (name, self._describe(name, plan), discovery_state(name, plan))
            for name in plan.managed_deferred
        )

    async def load(
        self, names: Sequence[str]
    ) -> tuple[tuple[str, ...], tuple[tuple[str, str], ...]]:
        plan = self._plan()
        if plan is None:
            return (), ()
        result = load_names(list(names), plan)
        discovered = self._services.discovered
        fresh = [name for name in result.loaded if name not in discovered]
        discovered.update(result.loaded)
        resync = self._services.resync
        if (fresh or result.add) and resync is not None:
            await resync()
        return result.loaded, result.rejected
