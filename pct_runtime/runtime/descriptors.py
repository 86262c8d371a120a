"""What the runtime does through the capability descriptors, and nothing else.

Nothing here names a capability: it iterates the descriptors (`capabilities/table.py`).

**Bindings.** A binding names the tools a capability provides (its registry row's, so the
two cannot drift) and builds them for one session from that session's `SessionContext`.
Whether a tool is active is decided by the decision layer; bindings never decide it.

**Applying a planned projection.** A sync (`RuntimeSession.sync`) plans a candidate
projection and, before it may commit, applies it: the fence goes up before any await, then
the cleanups run, so a call that lands mid-sync never starts work the new plan drops. The
registry row's `kept` says whether a plan keeps what a capability built, and its
descriptor says what that means.

1. The candidate's **start fence** takes effect at once, before any await: the tools that
   start new work (each descriptor's `starts`) are refused for the capabilities the
   candidate no longer keeps, while the tools that continue work (polling, stdin) keep
   control of what the session already owns.
2. The cleanups run: each descriptor's `Cleanup`, dependents first (reverse binding
   order, so Code Mode closes before the shell manager it drives). They close, reset or
   reconfigure what the session built (see each descriptor). An unconfirmed close keeps
   its manager (and its real ownership): new starts stay refused, retained work stays
   reachable, and the next sync retries.

A model change or an unchanged reload plans the same routes, so nothing is closed and the
session's running work and files are preserved.

**Payload hooks.** Only an agent that embeds the runtime can let it edit provider
requests, so these act only in `embedded` sessions (an `mcp` session gets its payload back
unchanged and `before_compact` answers None, "compact natively"). Each descriptor with a
`payload` hook gets the session's context and its committed active decisions (key →
effective backend) as plain facts; what it does with them is its own (native Web Search
and Remote Compaction live in the OpenAI seam).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass
from typing import Protocol

from pct_runtime.capabilities.base import CallableTool, Tool
from pct_runtime.capabilities.context import Slots
from pct_runtime.capabilities.descriptor import ActiveDecisions, Descriptor
from pct_runtime.capabilities.table import BY_KEY, CAPABILITIES, descriptors
from pct_runtime.config.schema import ToolkitConfig
from pct_runtime.decide.projection import ProjectionPlan
from pct_runtime.decide.rows import released
from pct_runtime.host.pi.session import SessionKind
from pct_runtime.runtime.context import CapabilityBinding, SessionContext

_log = logging.getLogger(__name__)


# -- bindings ----------------------------------------------------------------------------
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


# -- applying a plan ---------------------------------------------------------------------
#: Planning passes a sync makes before it commits: the cleanups await, so the host can move;
#: a fresh plan with another transition is applied in turn, up to this many passes in all.
MAX_APPLY_PASSES = 3


@dataclass(frozen=True)
class Transition:
    """What applying one plan requires: the start fence and each cleanup's inputs.

    Two plans with equal transitions need the same cleanups, so a re-plan that yields the
    same transition may commit without running them again.
    """

    #: Capability keys the plan no longer keeps.
    released: frozenset[str]
    #: Names whose new starts the fence refuses.
    denied_starts: frozenset[str]
    #: (capability key, what its cleanup reads of the config), in binding order.
    settings: tuple[tuple[str, Hashable], ...]


def transition_of(plan: ProjectionPlan, config: ToolkitConfig | None) -> Transition:
    """The fence and the cleanups' inputs `plan` asks for under `config`."""
    gone = released(CAPABILITIES, plan.decisions, plan.routes)
    found = descriptors()
    return Transition(
        released=gone,
        denied_starts=frozenset(name for d in found if d.key in gone for name in d.starts),
        settings=tuple((d.key, d.cleanup.settings(config)) for d in found if d.cleanup),
    )


async def apply_cleanups(
    transition: Transition,
    slots: Slots,
    *,
    pending: Callable[[bool], None],
) -> list[Exception]:
    """Run the cleanups `transition` needs; return the failures (empty = applied).

    Every step runs even when an earlier one failed, so one stuck process does not keep
    the others alive. `pending(flag)` records whether a cleanup that status reports
    (Code Mode's) is left unconfirmed, until a retry confirms it.
    """
    errors: list[Exception] = []
    settings = dict(transition.settings)
    for descriptor in reversed(descriptors()):
        cleanup = descriptor.cleanup
        if cleanup is None:
            continue
        kept = descriptor.key not in transition.released
        try:
            confirmed = await cleanup.run(slots, kept, settings.get(descriptor.key))
        except Exception as exc:
            _log.warning("%s cleanup did not confirm: %s", BY_KEY[descriptor.key].title, exc)
            if cleanup.reports_pending:
                pending(True)
            errors.append(exc)
        else:
            if confirmed and cleanup.reports_pending:
                pending(False)
    return errors


# -- payload hooks -----------------------------------------------------------------------
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
