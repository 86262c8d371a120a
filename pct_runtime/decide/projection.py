"""Projection: from config + host state to the active tool names of one session.

`plan_projection` is pure: it reads the visible tool registrations (with owners), the
session's current active list, the Tool Discovery loads and the natives the last
committed projection hid, and returns a `ProjectionPlan` — the ordered active list,
hidden natives, nested-only names, deferred-hidden names, the execution routes and one
final `Decision` per capability (conflicts and the `deferred` overlay applied). It never
touches a foreign registration: a name another extension visibly won keeps whatever
activation state it had.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from pct_runtime.datarecord import datarecord, field, replace
from pct_runtime.decide.context import ActiveList, PlanContext, ProjectionInputs
from pct_runtime.decide.decisions import Decision
from pct_runtime.decide.execution import (
    ExecutionAdmission,
    ExecutionRoutes,
    is_eager_replacement,
    is_nested_only,
    request_capabilities,
    resolve_routes,
)
from pct_runtime.decide.rows import CapabilityRow, deferral, duplicated
from pct_runtime.host.pi.model_registry import Model
from pct_runtime.host.pi.names import (
    DEFERRABLE_TOOL_NAMES,
    EXECUTION_TOOL_NAMES,
    FIND_TOOLS_TOOL,
    NATIVE_BASH,
    NATIVE_EDIT,
    NATIVE_WRITE,
    REPLACEABLE_NATIVES,
)
from pct_runtime.host.pi.session import SessionKind
from pct_runtime.host.pi.tool_registry import ToolSnapshot

__all__ = [
    "ProjectionInputs",
    "ProjectionPlan",
    "is_hidden_by_discovery",
    "plan_projection",
    "resolve_deferred_set",
]


@datarecord
class ProjectionPlan:
    """One planned projection. Committing it is `ProjectionSync`'s job."""

    active: tuple[str, ...]
    hidden_natives: tuple[str, ...]
    nested_only: tuple[str, ...]
    deferred_hidden: tuple[str, ...]
    managed_deferred: tuple[str, ...]
    loader_available: bool
    loaded: tuple[str, ...]
    admitted_names: tuple[str, ...]
    routes: ExecutionRoutes
    decisions: dict[str, Decision]
    #: Decisions before conflicts/overlays: what discovery eligibility reads.
    base_decisions: dict[str, Decision]
    tools: ToolSnapshot
    identity: str | None
    model: Model | None
    session_kind: SessionKind
    ui_available: bool
    rules_managed: bool
    search_path_conflict: bool
    notes: tuple[str, ...] = field(default=())
    #: The session's loads after this plan: emptied while discovery is disabled, so that
    #: re-enabling hides every deferred name again. Write it back into the session on commit.
    discovered: frozenset[str] = frozenset()
    #: The capability rows it was planned with, in status order (`decisions` follows them):
    #: discovery and status read them from here.
    rows: tuple[CapabilityRow, ...] = ()

    @property
    def native_suppressed(self) -> frozenset[str]:
        return frozenset(self.hidden_natives)

    @property
    def approval_transport(self) -> str:
        return "dialog" if self.ui_available else "unavailable"


def resolve_deferred_set(deferred: Iterable[str]) -> tuple[str, ...]:
    """The managed set: known deferrable names only, canonical order, no duplicates."""
    selected = set(deferred)
    return tuple(name for name in DEFERRABLE_TOOL_NAMES if name in selected)


def is_hidden_by_discovery(
    name: str, loader_available: bool, deferred: Iterable[str], discovered: Iterable[str]
) -> bool:
    """Managed and not yet loaded this session, while the `find_tools` loader is available.

    Losing the loader counts as discovery off: nothing is hidden.
    """
    return loader_available and name in set(deferred) and name not in set(discovered)


def plan_projection(inputs: ProjectionInputs, rows: Sequence[CapabilityRow]) -> ProjectionPlan:
    """Every capability row's planner, in status order (`capabilities.table.CAPABILITIES`):
    base decisions, the desired active list, native substitution (the execution routes'
    coupling), then the final rows."""
    rows = tuple(rows)
    config = inputs.config
    tools = inputs.tools
    if inputs.host_admitted is not None:
        admitted = inputs.host_admitted
        tools = ToolSnapshot(tuple(t for t in tools.tools if t.name in admitted))
    ident = inputs.identity
    model = inputs.model

    settings = deferral(rows, config)
    managed = resolve_deferred_set(settings.deferred)
    loader = settings.enabled and not tools.unavailable(FIND_TOOLS_TOOL, ident)
    discovered = inputs.discovered if settings.enabled else frozenset()
    routes = resolve_routes(
        request_capabilities(config, model), ExecutionAdmission.from_tools(tools, ident)
    )
    ctx = PlanContext(inputs, tools, routes, managed, loader, frozenset(discovered))

    base: dict[str, Decision | None] = {row.key: row.planner.base(ctx) for row in rows}
    desired = ActiveList(inputs.active)
    for row in rows:
        row.planner.activate(ctx, base[row.key], desired)

    # Native substitution is keyed by built-in identity: only a visible built-in winner
    # is ours to hide, only what we hid is restored, and a built-in that was already
    # inactive (user-disabled) is never revived.
    suppressed = set(inputs.native_suppressed)
    for name, hide in (
        (NATIVE_BASH, routes.hide_bash),
        (NATIVE_EDIT, routes.hide_edit_write),
        (NATIVE_WRITE, routes.hide_edit_write),
    ):
        builtin = tools.is_builtin_winner(name)
        if hide:
            if builtin:
                if name in desired:
                    suppressed.add(name)
                desired.delete(name)
            else:
                suppressed.discard(name)
        elif name in suppressed:
            suppressed.discard(name)
            if builtin:
                desired.add(name)

    active = tuple(desired.names)
    deferred_hidden = tuple(
        name
        for name in managed
        if ctx.hidden(name)
        and not is_eager_replacement(name, routes)
        and not is_nested_only(name, routes)
    )
    loaded = tuple(name for name in managed if name in discovered and name in active)
    settled = replace(ctx, active=active, deferred_hidden=frozenset(deferred_hidden), loaded=loaded)
    decisions = {row.key: row.planner.final(settled, base[row.key]) for row in rows}
    admitted_names = tuple(name for name in EXECUTION_TOOL_NAMES if tools.owned(name, ident))
    return ProjectionPlan(
        active=active,
        hidden_natives=tuple(name for name in REPLACEABLE_NATIVES if name in suppressed),
        nested_only=tuple(name for name in admitted_names if is_nested_only(name, routes)),
        deferred_hidden=deferred_hidden,
        managed_deferred=managed,
        loader_available=loader,
        loaded=loaded,
        admitted_names=admitted_names,
        routes=routes,
        decisions=decisions,
        base_decisions={key: value for key, value in base.items() if value is not None},
        tools=tools,
        identity=ident,
        model=model,
        session_kind=inputs.session_kind,
        ui_available=inputs.ui_available,
        rules_managed=config.execution is not None,
        search_path_conflict=duplicated(rows, config, active),
        notes=routes.notes,
        discovered=frozenset(discovered),
        rows=rows,
    )
