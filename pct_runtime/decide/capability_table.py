"""The capability registry's decide-layer table: one row per capability, in status order.

Status, the runtime's refusals and bindings, the projection, discovery eligibility and
the console's `/pct config` menu iterate this table instead of naming capabilities (see
docs/adding-a-capability.md). A row is the decision key (also the
config section), the title, the tool names it owns, its exact refusal texts, the lines its
status block prints after `configured`/`effective` (`blocks.py`), its `Planner` (its
decision in a planning pass and its discovery eligibility), its discovery load group and
its menu items — so layers above decide read it without importing a capability package.
The config layer's half of a row is `config/sections.py`; a package's descriptor is
`capabilities/descriptor_table.py`'s.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import Literal

from pct_runtime.config import ToolkitConfig
from pct_runtime.decide import blocks
from pct_runtime.decide.blocks import StatusRows
from pct_runtime.decide.context import (
    DISABLED,
    ELIGIBLE,
    NATIVE_BACKEND,
    NESTED_ONLY,
    ActiveList,
    Eligibility,
    PlanContext,
    Planner,
    ineligible,
)
from pct_runtime.decide.decisions import (
    CONFLICT,
    Decision,
    WebSearchSettings,
    decide_computer_use,
    decide_image_generation,
    decide_remote_compaction,
    decide_tool_discovery,
    decide_web_search,
)
from pct_runtime.decide.execution import (
    ExecutionRoutes,
    code_decision,
    is_nested_only,
    patch_decision,
    shell_decision,
)
from pct_runtime.host.pi import names

# -- Planners: each capability's decision in a planning pass ---------------------------------

#: A foreign tool literally named `web_search` duplicates the search path.
FOREIGN_SEARCH_TOOL = "web_search"


def _given(base: Decision | None) -> Decision:
    assert base is not None, "this planner always gives a base decision"
    return base


def _feature(base: Decision) -> Eligibility:
    """An active decision is eligible; otherwise its unavailable reason, or `disabled`."""
    if base.active:
        return ELIGIBLE
    return ineligible(base.reason if base.effective == "unavailable" else DISABLED)


class _NoTools:
    """Defaults of a planner whose names never load through `find_tools`."""

    def base(self, ctx: PlanContext) -> Decision | None:
        return None

    def activate(self, ctx: PlanContext, base: Decision | None, desired: ActiveList) -> None:
        return None

    def eligibility(self, name: str, base: Decision | None, routes: ExecutionRoutes) -> Eligibility:
        return ineligible(DISABLED)  # fail closed for a name no feature lets load


class _WebSearch(_NoTools):
    """Native or sidecar: only the sidecar has a tool; a native decision is not a conflict."""

    tools = (names.WEB_SEARCH_TOOL,)

    def base(self, ctx: PlanContext) -> Decision:
        ws = ctx.config.web_search
        return decide_web_search(
            WebSearchSettings(ws.enabled, ws.backend, ws.sidecar_model),
            ctx.model,
            ctx.inputs.registry,
            ctx.inputs.session_kind,
        )

    def activate(self, ctx: PlanContext, base: Decision | None, desired: ActiveList) -> None:
        sidecar = _given(base).effective_backend == "sidecar"
        ctx.activate(desired, self.tools, lambda name: sidecar and not ctx.hidden(name))

    def final(self, ctx: PlanContext, base: Decision | None) -> Decision:
        row = _given(base)
        if ctx.any_unavailable(self.tools) and row.effective_backend == "sidecar":
            row = replace(
                row, effective="unavailable", effective_backend="unavailable", reason=CONFLICT
            )
        if row.effective_backend == "sidecar":
            row = ctx.overlay(row, self.tools)
        if row.effective == "active" and search_path_conflict(ctx.config, ctx.active):
            row = replace(row, reason=CONFLICT)  # duplicate search path: a warning, still active
        return row

    def eligibility(self, name: str, base: Decision | None, routes: ExecutionRoutes) -> Eligibility:
        ws = _given(base)
        if ws.effective_backend == "sidecar":
            return ELIGIBLE
        if ws.effective_backend == "unavailable":
            return ineligible(ws.reason)
        return ineligible(DISABLED if ws.effective_backend == "off" else NATIVE_BACKEND)


def search_path_conflict(config: ToolkitConfig, active: tuple[str, ...]) -> bool:
    """Web Search is on while a foreign `web_search` tool is active."""
    return config.web_search.enabled and FOREIGN_SEARCH_TOOL in active


class _Compaction(_NoTools):
    """A hook, no tools: its decision is its row."""

    def base(self, ctx: PlanContext) -> Decision:
        return decide_remote_compaction(
            ctx.config.remote_compaction.enabled,
            ctx.model,
            ctx.inputs.registry,
            ctx.inputs.session_kind,
        )

    def final(self, ctx: PlanContext, base: Decision | None) -> Decision:
        return _given(base)


@dataclass(frozen=True)
class _Gated(_NoTools):
    """One decision gates a deferrable group of names (Image Generation, Computer Use)."""

    tools: tuple[str, ...]
    decide: Callable[[PlanContext], Decision]

    def base(self, ctx: PlanContext) -> Decision:
        return self.decide(ctx)

    def activate(self, ctx: PlanContext, base: Decision | None, desired: ActiveList) -> None:
        active = _given(base).active
        ctx.activate(desired, self.tools, lambda name: active and not ctx.hidden(name))

    def final(self, ctx: PlanContext, base: Decision | None) -> Decision:
        return ctx.overlay(ctx.conflicted(_given(base), self.tools), self.tools)

    def eligibility(self, name: str, base: Decision | None, routes: ExecutionRoutes) -> Eligibility:
        return _feature(_given(base))


@dataclass(frozen=True)
class _Route(_NoTools):
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


@dataclass(frozen=True)
class Deferral:
    """The Tool Discovery settings every planning pass reads."""

    enabled: bool
    deferred: tuple[str, ...]


def deferral(config: ToolkitConfig) -> Deferral:
    return Deferral(config.tool_discovery.enabled, config.tool_discovery.deferred)


class _Discovery(_NoTools):
    """`find_tools` itself: on with the feature; counts only while its loader is ours."""

    tools = (names.FIND_TOOLS_TOOL,)

    def activate(self, ctx: PlanContext, base: Decision | None, desired: ActiveList) -> None:
        enabled = ctx.config.tool_discovery.enabled
        ctx.activate(desired, self.tools, lambda name: enabled)

    def final(self, ctx: PlanContext, base: Decision | None) -> Decision:
        return decide_tool_discovery(
            ctx.config.tool_discovery.enabled,
            ctx.any_unavailable(self.tools),
            len(ctx.managed),
            len(ctx.loaded),
        )


def _image(ctx: PlanContext) -> Decision:
    return decide_image_generation(
        ctx.config.image_generation.enabled, ctx.model, ctx.inputs.registry
    )


def _computer_use(ctx: PlanContext) -> Decision:
    return decide_computer_use(
        ctx.config.computer_use.enabled,
        ctx.inputs.platform,
        ctx.inputs.ui_available,
        ctx.model,
        ctx.inputs.host_reasons.get("computer_use"),
    )


def _patch(ctx: PlanContext) -> Decision:
    tools = (names.APPLY_PATCH_TOOL,)
    return patch_decision(
        ctx.config, ctx.routes, ctx.any_unavailable(tools), ctx.any_foreign(tools)
    )


def _shell(ctx: PlanContext) -> Decision:
    return shell_decision(
        ctx.config,
        ctx.routes,
        ctx.any_unavailable(names.SHELL_TOOLS),
        ctx.any_foreign(names.SHELL_TOOLS),
        ctx.inputs.shell_available,
    )


def _code(ctx: PlanContext) -> Decision:
    return code_decision(
        ctx.config,
        ctx.routes,
        ctx.any_unavailable(names.CODE_MODE_TOOLS),
        ctx.any_foreign(names.CODE_MODE_TOOLS),
    )


# -- Console menu items -----------------------------------------------------------------------

#: How the console shows and edits a menu item (`pct_tui/state/drafts.py` gives each its meaning):
#: `switch` flips a boolean field, `choice` cycles `choices`, `approval` flips
#: Confirm/Always, `legacy` is a core switch the execution rules replace, `rules` opens
#: the rules editor, `pick` opens a picker and shows `value`.
MenuKind = Literal["switch", "choice", "approval", "legacy", "rules", "pick"]


@dataclass(frozen=True)
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


def _executor_value(config: ToolkitConfig) -> str:
    sidecar = config.web_search.sidecar_model
    return f"{sidecar.provider}/{sidecar.model}" if sidecar else "none"


def _effort_value(config: ToolkitConfig) -> str:
    sidecar = config.web_search.sidecar_model
    return sidecar.thinking_level if sidecar else "-"


def _deferred_value(config: ToolkitConfig) -> str:
    return f"{len(config.tool_discovery.deferred)} of {len(names.DEFERRABLE_TOOL_NAMES)}"


_WEB_SEARCH_MENU = (
    MenuEntry("web_search", "Web Search", "Web Search on/off."),
    MenuEntry(
        "backend",
        "Backend",
        "Web Search backend: auto, native or sidecar.",
        "choice",
        "backend",
        ("auto", "native", "sidecar"),
    ),
    MenuEntry(
        "mode", "Mode", "Web Search mode: live or cached.", "choice", "mode", ("live", "cached")
    ),
    MenuEntry(
        "context_size",
        "Context size",
        "Search context size: low, medium or high.",
        "choice",
        "context_size",
        ("low", "medium", "high"),
    ),
    MenuEntry(
        "executor",
        "Web Search executor",
        "The model that runs sidecar searches: an official OpenAI/Codex Responses route "
        "from the model registry.",
        "pick",
        value=_executor_value,
    ),
    MenuEntry(
        "effort",
        "Web Search executor effort",
        "auto, or a thinking level the chosen Codex model supports.",
        "pick",
        value=_effort_value,
    ),
)
_COMPUTER_USE_MENU = (
    MenuEntry("computer_use", "Computer Use", "Computer Use on/off."),
    MenuEntry(
        "computer_use_approval",
        "Computer Use approval",
        "Confirm asks once per app (Yes is remembered in memory, No is not); Always accepts "
        "every valid request without asking.",
        "approval",
        "approval_mode",
    ),
)
_CODE_MENU = (
    MenuEntry(
        "code_mode",
        "Code Mode",
        "Code Mode (exec / wait) on/off (the legacy switch). Once the file has execution "
        "rules, Enter opens them.",
        "legacy",
    ),
    MenuEntry(
        "rules",
        "Execution rules",
        "Ordered model rules for Patch / direct Shell / Code (opens the rules editor).",
        "rules",
        previews=False,
    ),
    MenuEntry(
        "code_approval",
        "Code Mode nested Apply Patch confirmation",
        "Confirm asks before each nested apply_patch in a Code Mode cell; Always skips only "
        "that extra confirmation.",
        "approval",
        "approval_mode",
    ),
)
_DISCOVERY_MENU = (
    MenuEntry("tool_discovery", "Tool Discovery", "Tool Discovery on/off."),
    MenuEntry(
        "deferred",
        "Deferred tools",
        "Which Toolkit tools stay hidden until find_tools loads them (Computer Use: all six "
        "or none).",
        "pick",
        value=_deferred_value,
    ),
)


# -- Rows -------------------------------------------------------------------------------------

#: How `find_tools` loads a row's names: one by one, all or none, or checked as a pair.
LoadGroup = Literal["single", "atomic", "joint"]


@dataclass(frozen=True)
class CapabilityRow:
    """One capability as decide and status see it."""

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


#: Every capability, in the order `/pct status` prints its block (the status text is pinned
#: byte for byte, so this order is part of it).
CAPABILITIES: tuple[CapabilityRow, ...] = (
    CapabilityRow(
        "web_search",
        "Web Search",
        blocks.web_search_rows,
        (names.WEB_SEARCH_TOOL,),
        "OpenAI Web Search is not active for the current model.",
        "OpenAI Web Search is unavailable: ",
        planner=_WebSearch(),
        menu=_WEB_SEARCH_MENU,
    ),
    CapabilityRow(
        "remote_compaction",
        "Remote Compaction",
        blocks.compaction_rows,
        planner=_Compaction(),
        menu=(MenuEntry("remote_compaction", "Remote Compaction", "Remote Compaction on/off."),),
    ),
    CapabilityRow(
        "image_generation",
        "Image Generation",
        blocks.image_rows,
        (names.IMAGE_GENERATION_TOOL,),
        "OpenAI Image Generation is not active for the current model.",
        "OpenAI Image Generation is unavailable: ",
        planner=_Gated((names.IMAGE_GENERATION_TOOL,), _image),
        menu=(MenuEntry("image_generation", "Image Generation", "Image Generation on/off."),),
    ),
    CapabilityRow(
        "apply_patch",
        "Apply Patch",
        blocks.apply_patch_rows,
        (names.APPLY_PATCH_TOOL,),
        "Apply Patch is not enabled.",
        planner=_Route((names.APPLY_PATCH_TOOL,), lambda routes: routes.direct_patch, _patch),
        kept=lambda decision, routes: routes.direct_patch or routes.nested_patch,
        menu=(
            MenuEntry(
                "apply_patch",
                "Apply Patch",
                "Apply Patch on/off (the legacy switch). Once the file has execution rules, "
                "the rules decide per model: Enter opens them.",
                "legacy",
            ),
        ),
    ),
    CapabilityRow(
        "computer_use",
        "Computer Use",
        blocks.computer_use_rows,
        names.COMPUTER_USE_TOOLS,
        "Computer Use is not active for the current session.",
        planner=_Gated(names.COMPUTER_USE_TOOLS, _computer_use),
        load_group="atomic",
        menu=_COMPUTER_USE_MENU,
        # Deferred by Tool Discovery is hidden until loaded, not disabled.
        kept=lambda decision, routes: decision.effective in ("active", "deferred"),
    ),
    CapabilityRow(
        "shell_sessions",
        "Shell Sessions",
        blocks.shell_rows,
        names.SHELL_TOOLS,
        "Shell Sessions are not enabled.",
        planner=_Route(names.SHELL_TOOLS, lambda routes: routes.direct_shell, _shell),
        load_group="joint",
        kept=lambda decision, routes: routes.needs_shell_backend,
        menu=(
            MenuEntry(
                "shell_sessions",
                "Shell Sessions",
                "Shell Sessions (exec_command / write_stdin) on/off (the legacy switch). Once "
                "the file has execution rules, Enter opens them.",
                "legacy",
            ),
        ),
    ),
    CapabilityRow(
        "code_mode",
        "Code Mode",
        blocks.code_rows,
        names.CODE_MODE_TOOLS,
        "Code Mode is not enabled.",
        planner=_Route(names.CODE_MODE_TOOLS, lambda routes: routes.code, _code),
        load_group="joint",
        kept=lambda decision, routes: routes.code,
        menu=_CODE_MENU,
    ),
    CapabilityRow(
        "tool_discovery",
        "Tool Discovery",
        blocks.discovery_rows,
        (names.FIND_TOOLS_TOOL,),
        "Tool discovery is not enabled.",
        planner=_Discovery(),
        menu=_DISCOVERY_MENU,
    ),
)

#: The rows by decision key (the runtime's bindings take their tool names from here).
BY_KEY: dict[str, CapabilityRow] = {row.key: row for row in CAPABILITIES}
#: The rows in the order the console's `/pct config` menu lists their items.
MENU_ROWS: tuple[CapabilityRow, ...] = tuple(
    BY_KEY[key]
    for key in (
        "web_search",
        "remote_compaction",
        "image_generation",
        "computer_use",
        "apply_patch",
        "shell_sessions",
        "code_mode",
        "tool_discovery",
    )
)
#: The row that owns each tool name (discovery eligibility dispatches on it).
BY_TOOL: dict[str, CapabilityRow] = {name: row for row in CAPABILITIES for name in row.tools}


def released(decisions: Mapping[str, Decision], routes: ExecutionRoutes) -> frozenset[str]:
    """The capabilities a plan with these decisions and routes no longer keeps."""
    return frozenset(
        row.key
        for row in CAPABILITIES
        if row.key in decisions and not row.kept(decisions[row.key], routes)
    )
