"""Applying a planned projection: the start fence and the owned-resource cleanups.

A sync (`RuntimeSession.sync`) plans a candidate projection and, before it may commit,
applies it: the fence goes up before any await, then the cleanups run, so a call that
lands mid-sync never starts work the new plan drops. Nothing here names a capability: the
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
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Hashable
from dataclasses import dataclass

from pct_runtime.capabilities.context import Slots
from pct_runtime.capabilities.registry import descriptors
from pct_runtime.config.schema import ToolkitConfig
from pct_runtime.decide.projection import ProjectionPlan
from pct_runtime.decide.registry import BY_KEY, released

_log = logging.getLogger(__name__)

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
    gone = released(plan.decisions, plan.routes)
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
