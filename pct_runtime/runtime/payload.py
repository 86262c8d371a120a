"""The payload hooks of an `embedded` session, through the capability descriptors.

Only an agent that embeds the runtime can let it edit provider requests, so these hooks
act only in `embedded` sessions (an `mcp` session gets its payload back unchanged and
`before_compact` answers None, "compact natively"). Each descriptor with a `payload`
hook gets the session's context and its committed active decisions (key → effective
backend) as plain facts; what it does with them is its own (native Web Search and
Remote Compaction live in the OpenAI seam).
"""

from __future__ import annotations

from typing import Protocol

from pct_runtime.capabilities.descriptor import ActiveDecisions
from pct_runtime.capabilities.registry import descriptors
from pct_runtime.decide.projection import ProjectionPlan
from pct_runtime.host.session import SessionKind
from pct_runtime.runtime.context import SessionContext


class PayloadSession(Protocol):
    """What the payload hooks read of a `RuntimeSession` (which calls them with itself)."""

    @property
    def kind(self) -> SessionKind: ...
    @property
    def closed(self) -> bool: ...
    @property
    def plan(self) -> ProjectionPlan | None: ...
    @property
    def context(self) -> SessionContext: ...


def _active(session: PayloadSession) -> ActiveDecisions:
    plan = session.plan
    if plan is None:
        return {}
    return {
        key: decision.effective_backend
        for key, decision in plan.decisions.items()
        if decision.effective == "active"
    }


async def before_provider_request(
    session: PayloadSession, payload: object, *, newest_compaction_details: object = None
) -> object:
    """Every descriptor's request hook in binding order; never mutates `payload`."""
    if session.kind != "embedded" or session.closed:
        return payload
    active = _active(session)
    for descriptor in descriptors():
        if descriptor.payload is not None:
            payload = await descriptor.payload.before_provider_request(
                session.context, payload, active, newest_compaction_details
            )
    return payload


async def before_compact(session: PayloadSession, preparation: object) -> object | None:
    """The first descriptor's compaction result that replaces the agent's own summary, or
    None (compact natively)."""
    if session.kind != "embedded" or session.closed:
        return None
    for descriptor in descriptors():
        if descriptor.payload is not None:
            result = await descriptor.payload.before_compact(session.context, preparation)
            if result is not None:
                return result
    return None
