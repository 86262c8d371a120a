"""What a capability's declaration is made of, as the decision layer reads it.

Each capability package declares itself in its own `declaration.py`, built from these
primitives: a `CapabilityRow` (its key, title, tool names, refusal texts, status lines,
`Planner`, discovery load group, console menu items, what a plan keeps, where its binding
lives), and `capabilities/table.py` lists the rows in status order. The decision layer
names no capability: the projection, discovery and status take the rows as data
(`plan_projection(inputs, rows)`, the plan carries them on). See
docs/adding-a-capability.md.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Literal

from pct_runtime.config import ToolkitConfig
from pct_runtime.datarecord import datarecord, field
from pct_runtime.decide.context import (
    DISABLED,
    ELIGIBLE,
    NESTED_ONLY,
    ActiveList,
    Eligibility,
    PlanContext,
    Planner,
    ineligible,
)
from pct_runtime.decide.decisions import Decision
from pct_runtime.decide.execution import ExecutionRoutes, is_nested_only

#: A rule-managed tool that is off only because no model is known reports this reason.
NO_MODEL_REASON = "current-model-missing"

#: (decision, no model known under execution rules) -> the lines of a capability's
#: `pct status` block after `configured`/`effective`. Each declaration has its own: fixed
#: lines, the same words every time, so a reader (or a script) can match them.
StatusRows = Callable[[Decision, bool], list[str]]


def rule_reason(decision: Decision, no_model: bool) -> str:
    """A rule-managed tool that is off only because no model is known says so."""
    if no_model and not decision.reason and decision.effective == "off":
        return NO_MODEL_REASON
    return decision.reason


# -- Planners: the shapes a capability's decision takes in a planning pass -------------------


def given(base: Decision | None) -> Decision:
    assert base is not None, "this planner always gives a base decision"
    return base


def feature_eligibility(base: Decision) -> Eligibility:
    """An active decision is eligible; otherwise its unavailable reason, or `disabled`."""
    if base.active:
        return ELIGIBLE
    return ineligible(base.reason if base.effective == "unavailable" else DISABLED)


class NoTools:
    """Defaults of a planner whose names never load through `find_tools`."""

    def base(self, ctx: PlanContext) -> Decision | None:
        return None

    def activate(self, ctx: PlanContext, base: Decision | None, desired: ActiveList) -> None:
        return None

    def eligibility(self, name: str, base: Decision | None, routes: ExecutionRoutes) -> Eligibility:
        return ineligible(DISABLED)  # fail closed for a name no feature lets load


@datarecord
class Gated(NoTools):
    """One decision gates a deferrable group of names (Image Generation, Computer Use)."""

    tools: tuple[str, ...]
    decide: Callable[[PlanContext], Decision]

    def base(self, ctx: PlanContext) -> Decision:
        return self.decide(ctx)

    def activate(self, ctx: PlanContext, base: Decision | None, desired: ActiveList) -> None:
        active = given(base).active
        ctx.activate(desired, self.tools, lambda name: active and not ctx.hidden(name))

    def final(self, ctx: PlanContext, base: Decision | None) -> Decision:
        return ctx.overlay(ctx.conflicted(given(base), self.tools), self.tools)

    def eligibility(self, name: str, base: Decision | None, routes: ExecutionRoutes) -> Eligibility:
        return feature_eligibility(given(base))


@datarecord
class Route(NoTools):
    """An execution capability: its route (decide/execution.py) decides it."""

    tools: tuple[str, ...]
    route: Callable[[ExecutionRoutes], bool]
    decide: Callable[[PlanContext], Decision]

    def activate(self, ctx: PlanContext, base: Decision | None, desired: ActiveList) -> None:
        on = self.route(ctx.routes)
        ctx.activate(desired, self.tools, lambda name: ctx.wants_visible(name, on))

    def final(self, ctx: PlanContext, base: Decision | None) -> Decision:
        return ctx.overlay(self.decide(ctx), self.tools)

    def eligibility(self, name: str, base: Decision | None, routes: ExecutionRoutes) -> Eligibility:
        if is_nested_only(name, routes):
            return ineligible(NESTED_ONLY)
        return ELIGIBLE if self.route(routes) else ineligible(DISABLED)


@datarecord
class Deferral:
    """The Tool Discovery settings every planning pass reads: on or off, and the names it
    defers (a row's `deferral` gives them; none means nothing is deferred)."""

    enabled: bool
    deferred: tuple[str, ...]


NO_DEFERRAL = Deferral(False, ())


# -- Console menu items -----------------------------------------------------------------------

#: How the console shows and edits a menu item (`pct_tui/state/drafts.py` gives each its meaning):
#: `switch` flips a boolean field, `choice` cycles `choices`, `approval` flips
#: Confirm/Always, `legacy` is a core switch the execution rules replace, `rules` opens
#: the rules editor, `pick` opens a picker and shows `value`.
MenuKind = Literal["switch", "choice", "approval", "legacy", "rules", "pick"]


@datarecord
class MenuEntry:
    """One item of the `/pct config` menu: its exact label and its help line."""

    key: str
    title: str
    help: str
    kind: MenuKind = "switch"
    #: The field of the row's config section it shows and edits.
    field: str = "enabled"
    choices: tuple[str, ...] = ()
    #: A `pick` item's value text.
    value: Callable[[ToolkitConfig], str] | None = None
    #: Whether the draft preview shows the row's decision while it is highlighted.
    previews: bool = True


# -- Rows -------------------------------------------------------------------------------------

#: How `find_tools` loads a row's names: one by one, all or none, or checked as a pair.
LoadGroup = Literal["single", "atomic", "joint"]


@datarecord
class CapabilityRow:
    """One capability as decide, status, the runtime and the console see it.

    Its config section is the `config/sections.py` model whose `KEY` is this row's `key`:
    the config layer parses the document below every capability, so the section classes
    stay there (a test keeps the two in step)."""

    key: str
    title: str
    status_rows: StatusRows
    #: The tool names this capability owns (none for a hook-only capability).
    tools: tuple[str, ...] = ()
    #: Exact model-facing refusal of a call to one of `tools` while inactive.
    refusal: str = ""
    #: When set, an `unavailable` decision with a reason is refused as `f"{prefix}{reason}."`.
    unavailable_prefix: str | None = None
    #: Its decision in a planning pass and its discovery eligibility.
    planner: Planner = field(kw_only=True)
    load_group: LoadGroup = "single"
    #: Its items of the console's `/pct config` menu.
    menu: tuple[MenuEntry, ...] = ()
    #: Whether a session under this plan keeps what the capability built: otherwise a
    #: sync fences its new starts and runs its descriptor's cleanup (`runtime/descriptors.py`).
    kept: Callable[[Decision, ExecutionRoutes], bool] = lambda decision, routes: True
    #: The module exporting its descriptor (`DESCRIPTORS`, its binding), imported on first
    #: use; None for a capability without tools of its own.
    binding: str | None = None
    #: The module exporting its host probe (`PROBE`, a `capabilities.descriptor.HostProbe`),
    #: imported by every planning pass; None without a host requirement. Not the binding:
    #: `pct status` loads these and no tool.
    probe: str | None = None
    #: The names this capability defers and whether it is on (Tool Discovery's settings).
    deferral: Callable[[ToolkitConfig], Deferral] | None = None
    #: A foreign tool in the active list duplicates this capability's path (the plan's
    #: `search_path_conflict`).
    duplicated: Callable[[ToolkitConfig, tuple[str, ...]], bool] | None = None


def by_key(rows: Iterable[CapabilityRow]) -> dict[str, CapabilityRow]:
    return {row.key: row for row in rows}


def by_tool(rows: Iterable[CapabilityRow]) -> dict[str, CapabilityRow]:
    """The row that owns each tool name (discovery eligibility dispatches on it)."""
    return {name: row for row in rows for name in row.tools}


def deferral(rows: Iterable[CapabilityRow], config: ToolkitConfig) -> Deferral:
    """The deferral settings of the row that defers names, or none."""
    for row in rows:
        if row.deferral is not None:
            return row.deferral(config)
    return NO_DEFERRAL


def duplicated(
    rows: Iterable[CapabilityRow], config: ToolkitConfig, active: tuple[str, ...]
) -> bool:
    """Some row's path is duplicated by a foreign tool in `active`."""
    return any(row.duplicated is not None and row.duplicated(config, active) for row in rows)


def released(
    rows: Iterable[CapabilityRow], decisions: Mapping[str, Decision], routes: ExecutionRoutes
) -> frozenset[str]:
    """The capabilities a plan with these decisions and routes no longer keeps."""
    return frozenset(
        row.key for row in rows if row.key in decisions and not row.kept(decisions[row.key], routes)
    )
