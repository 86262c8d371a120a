"""The capability registry's decide-layer table: one row per capability, in status order.

Status, the runtime's refusals, the projection and discovery eligibility iterate this
table instead of naming capabilities (see docs/ARCHITECTURE.md, "How to add a
capability"). A row is the decision key (also the config section), the title, the tool
names it owns, its exact refusal texts, the rows its status block prints after
`configured`/`effective`, and its `Planner` (its decision in a planning pass and its
discovery eligibility) — so layers above decide read it without importing a capability
package.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Literal

from pct_runtime.config import ToolkitConfig
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
    DASH,
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
from pct_runtime.host import names

#: A rule-managed tool that is off only because no model is known reports this reason.
NO_MODEL_REASON = "current-model-missing"

SIDECAR_NOTE = "  Sidecar uses a separate OpenAI request with additional latency and cost."
REMOTE_NOTE = (
    "  active is structural only; refreshed OAuth account compatibility is checked per attempt."
)
COMPUTER_USE_NOTE = "  experimental local bridge through ChatGPT.app node_repl and @oai/sky."
SHELL_NOTE = "  local pipes only; no TTY; commands launch once and are never replayed."
CODE_NOTE = (
    "  nested calls dispatch only declared adapters; per-call tool hooks and third-party "
    "permission interceptors do not see them."
)
DISCOVERY_NOTE = (
    "  only explicitly managed Toolkit-owned tools can be loaded; discovery never enables "
    "a disabled capability or grants permission."
)


def rule_reason(decision: Decision, no_model: bool) -> str:
    """A rule-managed tool that is off only because no model is known says so."""
    if no_model and not decision.reason and decision.effective == "off":
        return NO_MODEL_REASON
    return decision.reason


#: (decision, no model known under execution rules) -> the block's lines after its head.
StatusRows = Callable[[Decision, bool], list[str]]


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
        ctx.inputs.computer_use_runtime_reason,
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
    #: Exact model-facing refusal of a call to one of `tools` while inactive (toolkit.md §3.6).
    refusal: str = ""
    #: When set, an `unavailable` decision with a reason is refused as `f"{prefix}{reason}."`.
    unavailable_prefix: str | None = None
    #: Its decision in a planning pass and its discovery eligibility.
    planner: Planner = field(kw_only=True)
    load_group: LoadGroup = "single"


def _web_search_rows(d: Decision, no_model: bool) -> list[str]:
    return [
        f"  requested backend: {d.requested_backend}",
        f"  effective backend: {d.effective_backend}",
        f"  web search executor: {d.executor}",
        f"  web search executor effort: {d.executor_effort}",
        f"  reason: {d.reason}",
        SIDECAR_NOTE,
    ]


def _compaction_rows(d: Decision, no_model: bool) -> list[str]:
    return [f"  reason: {d.reason}", REMOTE_NOTE]


def _image_rows(d: Decision, no_model: bool) -> list[str]:
    return [f"  backend: {d.backend or DASH}", f"  reason: {d.reason}"]


def _apply_patch_rows(d: Decision, no_model: bool) -> list[str]:
    return [f"  reason: {rule_reason(d, no_model)}"]


def _computer_use_rows(d: Decision, no_model: bool) -> list[str]:
    return [f"  transport: {d.transport or DASH}", f"  reason: {d.reason}", COMPUTER_USE_NOTE]


def _shell_rows(d: Decision, no_model: bool) -> list[str]:
    return [f"  reason: {rule_reason(d, no_model)}", SHELL_NOTE]


def _code_rows(d: Decision, no_model: bool) -> list[str]:
    return [f"  reason: {rule_reason(d, no_model)}", CODE_NOTE]


def _discovery_rows(d: Decision, no_model: bool) -> list[str]:
    return [
        f"  reason: {d.reason}",
        f"  managed deferred tools: {d.managed or 0}",
        f"  loaded this session: {d.loaded or 0}",
        DISCOVERY_NOTE,
    ]


#: Every capability, in the order `/pct status` prints its block (reference/toolkit.md §3.3).
CAPABILITIES: tuple[CapabilityRow, ...] = (
    CapabilityRow(
        "web_search",
        "Web Search",
        _web_search_rows,
        (names.WEB_SEARCH_TOOL,),
        "OpenAI Web Search is not active for the current model.",
        "OpenAI Web Search is unavailable: ",
        planner=_WebSearch(),
    ),
    CapabilityRow(
        "remote_compaction", "Remote Compaction", _compaction_rows, planner=_Compaction()
    ),
    CapabilityRow(
        "image_generation",
        "Image Generation",
        _image_rows,
        (names.IMAGE_GENERATION_TOOL,),
        "OpenAI Image Generation is not active for the current model.",
        "OpenAI Image Generation is unavailable: ",
        planner=_Gated((names.IMAGE_GENERATION_TOOL,), _image),
    ),
    CapabilityRow(
        "apply_patch",
        "Apply Patch",
        _apply_patch_rows,
        (names.APPLY_PATCH_TOOL,),
        "Apply Patch is not enabled.",
        planner=_Route((names.APPLY_PATCH_TOOL,), lambda routes: routes.direct_patch, _patch),
    ),
    CapabilityRow(
        "computer_use",
        "Computer Use",
        _computer_use_rows,
        names.COMPUTER_USE_TOOLS,
        "Computer Use is not active for the current session.",
        planner=_Gated(names.COMPUTER_USE_TOOLS, _computer_use),
        load_group="atomic",
    ),
    CapabilityRow(
        "shell_sessions",
        "Shell Sessions",
        _shell_rows,
        names.SHELL_TOOLS,
        "Shell Sessions are not enabled.",
        planner=_Route(names.SHELL_TOOLS, lambda routes: routes.direct_shell, _shell),
        load_group="joint",
    ),
    CapabilityRow(
        "code_mode",
        "Code Mode",
        _code_rows,
        names.CODE_MODE_TOOLS,
        "Code Mode is not enabled.",
        planner=_Route(names.CODE_MODE_TOOLS, lambda routes: routes.code, _code),
        load_group="joint",
    ),
    CapabilityRow(
        "tool_discovery",
        "Tool Discovery",
        _discovery_rows,
        (names.FIND_TOOLS_TOOL,),
        "Tool discovery is not enabled.",
        planner=_Discovery(),
    ),
)

#: The rows by decision key (the runtime's bindings take their tool names from here).
BY_KEY: dict[str, CapabilityRow] = {row.key: row for row in CAPABILITIES}
#: The row that owns each tool name (discovery eligibility dispatches on it).
BY_TOOL: dict[str, CapabilityRow] = {name: row for row in CAPABILITIES for name in row.tools}
