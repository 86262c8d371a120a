"""Web Search's declaration: its row of the capability list (`capabilities/table.py`).

Cheap to import (`pct status` reads it): the decision layer's primitives and the tool's
name, never the tool. Its config section is `config/sections.py`'s `WebSearchConfig`; its
binding is the OpenAI factory's descriptor (the factory assembles the three OpenAI tools).
"""

from __future__ import annotations

from pct_runtime.config import ToolkitConfig
from pct_runtime.datarecord import replace
from pct_runtime.decide.context import (
    DISABLED,
    ELIGIBLE,
    NATIVE_BACKEND,
    ActiveList,
    Eligibility,
    PlanContext,
    ineligible,
)
from pct_runtime.decide.decisions import CONFLICT, Decision, WebSearchSettings, decide_web_search
from pct_runtime.decide.execution import ExecutionRoutes
from pct_runtime.decide.rows import CapabilityRow, MenuEntry, NoTools, given
from pct_runtime.host.pi import names

#: A foreign tool literally named `web_search` duplicates the search path.
FOREIGN_SEARCH_TOOL = "web_search"


def search_path_conflict(config: ToolkitConfig, active: tuple[str, ...]) -> bool:
    """Web Search is on while a foreign `web_search` tool is active."""
    return config.web_search.enabled and FOREIGN_SEARCH_TOOL in active


class _WebSearch(NoTools):
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
        sidecar = given(base).effective_backend == "sidecar"
        ctx.activate(desired, self.tools, lambda name: sidecar and not ctx.hidden(name))

    def final(self, ctx: PlanContext, base: Decision | None) -> Decision:
        row = given(base)
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
        ws = given(base)
        if ws.effective_backend == "sidecar":
            return ELIGIBLE
        if ws.effective_backend == "unavailable":
            return ineligible(ws.reason)
        return ineligible(DISABLED if ws.effective_backend == "off" else NATIVE_BACKEND)


def _executor_value(config: ToolkitConfig) -> str:
    sidecar = config.web_search.sidecar_model
    return f"{sidecar.provider}/{sidecar.model}" if sidecar else "none"


def _effort_value(config: ToolkitConfig) -> str:
    sidecar = config.web_search.sidecar_model
    return sidecar.thinking_level if sidecar else "-"


_MENU = (
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

SIDECAR_NOTE = "  Sidecar uses a separate OpenAI request with additional latency and cost."


def _status_lines(d: Decision, no_model: bool) -> list[str]:
    """The lines of its `pct status` block after `configured`/`effective`."""
    return [
        f"  requested backend: {d.requested_backend}",
        f"  effective backend: {d.effective_backend}",
        f"  web search executor: {d.executor}",
        f"  web search executor effort: {d.executor_effort}",
        f"  reason: {d.reason}",
        SIDECAR_NOTE,
    ]


ROW = CapabilityRow(
    "web_search",
    "Web Search",
    _status_lines,
    (names.WEB_SEARCH_TOOL,),
    "OpenAI Web Search is not active for the current model.",
    "OpenAI Web Search is unavailable: ",
    planner=_WebSearch(),
    menu=_MENU,
    binding="pct_runtime.capabilities.openai.factory",
    duplicated=search_path_conflict,
)
