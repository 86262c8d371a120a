"""Tool Discovery eligibility: may `find_tools` load this managed name right now?

A name is eligible only when its visible winner is the runtime's own registration, its
feature is on, and the same decision the projection used says the capability is active
for this model/session. The reasons are the spec's stable discovery reasons plus the
feature's own (`unsupported-platform`, `missing-sidecar-model`, …).
"""

from __future__ import annotations

from dataclasses import dataclass

from pct_runtime.decide.context import (
    DISABLED,
    ELIGIBLE,
    NATIVE_BACKEND,
    NESTED_ONLY,
    Eligibility,
    ineligible,
)
from pct_runtime.decide.projection import ProjectionPlan
from pct_runtime.decide.rows import CapabilityRow

__all__ = [
    "CONFLICTING",
    "DISABLED",
    "NATIVE_BACKEND",
    "NESTED_ONLY",
    "NOT_MANAGED",
    "NOT_REGISTERED",
    "Eligibility",
    "LoadResult",
    "atomic_groups",
    "base_eligibility",
    "discovery_state",
    "eligibility",
    "hidden_by_discovery",
    "joint_pairs",
    "load_names",
    "managed_eligibility",
]

NOT_REGISTERED = "not-registered"
NOT_MANAGED = "not-managed"
CONFLICTING = "conflicting-tool-name"


def atomic_groups(rows: tuple[CapabilityRow, ...]) -> tuple[tuple[str, ...], ...]:
    """Groups that load only as a whole (rows with `load_group="atomic"`)."""
    return tuple(row.tools for row in rows if row.load_group == "atomic")


def joint_pairs(rows: tuple[CapabilityRow, ...]) -> tuple[tuple[str, ...], ...]:
    """Pairs checked jointly; loading one member activates only that member."""
    return tuple(row.tools for row in rows if row.load_group == "joint")


_OK = ELIGIBLE
_no = ineligible


def base_eligibility(name: str, plan: ProjectionPlan) -> Eligibility:
    """Ownership first (absent → not-registered, foreign → conflicting-tool-name), then the
    owning row's planner. Does not check the managed set or pair siblings."""
    state = plan.tools.ownership(name, plan.identity).state
    if state == "absent":
        return _no(NOT_REGISTERED)
    if state == "foreign":
        return _no(CONFLICTING)
    row = next((row for row in plan.rows if name in row.tools), None)
    if row is None:
        return _no(DISABLED)  # fail closed for a name no feature claims
    return row.planner.eligibility(name, plan.base_decisions.get(row.key), plan.routes)


def eligibility(name: str, plan: ProjectionPlan) -> Eligibility:
    """`base_eligibility` plus the joint check of the Shell and Code pairs: a foreign or
    absent sibling's own reason is reported first, then the name's, then the sibling's."""
    pair = next((p for p in joint_pairs(plan.rows) if name in p), None)
    if pair is not None:
        for sibling in pair:
            if sibling != name and not plan.tools.owned(sibling, plan.identity):
                return base_eligibility(sibling, plan)
    own = base_eligibility(name, plan)
    if not own.ok or pair is None:
        return own
    for sibling in pair:
        if sibling != name:
            result = base_eligibility(sibling, plan)
            if not result.ok:
                return result
    return _OK


def managed_eligibility(name: str, plan: ProjectionPlan) -> Eligibility:
    """Eligibility of a requested name, `not-managed` outside the managed deferred set."""
    if name not in plan.managed_deferred:
        return _no(NOT_MANAGED)
    return eligibility(name, plan)


def hidden_by_discovery(plan: ProjectionPlan) -> tuple[str, ...]:
    """Managed names this session hides until loaded (eager and nested-only excluded)."""
    return plan.deferred_hidden


@dataclass(frozen=True)
class LoadResult:
    add: tuple[str, ...]
    loaded: tuple[str, ...]
    rejected: tuple[tuple[str, str], ...]


def load_names(requested: list[str], plan: ProjectionPlan) -> LoadResult:
    """Validate a `find_tools` load without activating anything.

    Atomic groups expand to every member and load only if all are managed and eligible
    (`group incomplete: <name> is not managed` / `group blocked by <member>: <reason>`).
    `add` never removes or duplicates an active name.
    """
    managed = set(plan.managed_deferred)
    active = set(plan.active)
    handled: set[str] = set()
    add: list[str] = []
    loaded: list[str] = []
    rejected: list[tuple[str, str]] = []
    groups = atomic_groups(plan.rows)
    for name in dict.fromkeys(requested):
        if name in handled:
            continue
        if name not in managed:
            rejected.append((name, NOT_MANAGED))
            continue
        group = next((g for g in groups if name in g), None)
        members = group or (name,)
        if group:
            handled.update(group)
            unmanaged = next((m for m in group if m not in managed), None)
            if unmanaged is not None:
                reason = f"group incomplete: {unmanaged} is not managed"
                rejected.extend((m, reason) for m in members)
                continue
        failure = next(((m, r) for m in members if not (r := eligibility(m, plan)).ok), None)
        if failure is not None:
            member, result = failure
            reason = f"group blocked by {member}: {result.reason}" if group else result.reason
            rejected.extend((m, reason) for m in members)
            continue
        for member in members:
            if member not in loaded:
                loaded.append(member)
            if member not in active:
                add.append(member)
    return LoadResult(tuple(add), tuple(loaded), tuple(rejected))


def discovery_state(name: str, plan: ProjectionPlan) -> str:
    """A managed name's `find_tools` query state: `active` (our registration is active now),
    `eligible` (a load of it would succeed) or `unavailable: <reason>` — the same reason a
    load would be rejected with, atomic-group reasons included."""
    if name in plan.active and plan.tools.owned(name, plan.identity):
        return "active"
    result = load_names([name], plan)
    rejected = dict(result.rejected)
    if name in rejected:
        return f"unavailable: {rejected[name]}"
    return "eligible"
