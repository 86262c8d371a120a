"""Code Mode's declaration: its row of the capability list (`capabilities/table.py`).

Cheap to import (`pct status` reads it): the decision layer's primitives and the tools'
names, never the worker. Its config section is `config/sections.py`'s `CodeModeConfig`;
its route is one of the execution rules (`decide/execution.py`), whose editor its menu
opens.
"""

from __future__ import annotations

from pct_runtime.decide.context import PlanContext
from pct_runtime.decide.decisions import Decision
from pct_runtime.decide.execution import code_decision
from pct_runtime.decide.rows import CapabilityRow, MenuEntry, Route, rule_reason
from pct_runtime.host.pi import names


def _code(ctx: PlanContext) -> Decision:
    return code_decision(
        ctx.config,
        ctx.routes,
        ctx.any_unavailable(names.CODE_MODE_TOOLS),
        ctx.any_foreign(names.CODE_MODE_TOOLS),
    )


_MENU = (
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

CODE_NOTE = (
    "  nested calls dispatch only declared adapters; per-call tool hooks and third-party "
    "permission interceptors do not see them."
)


def _status_lines(d: Decision, no_model: bool) -> list[str]:
    """The lines of its `pct status` block after `configured`/`effective`."""
    return [f"  reason: {rule_reason(d, no_model)}", CODE_NOTE]


ROW = CapabilityRow(
    "code_mode",
    "Code Mode",
    _status_lines,
    names.CODE_MODE_TOOLS,
    "Code Mode is not enabled.",
    planner=Route(names.CODE_MODE_TOOLS, lambda routes: routes.code, _code),
    load_group="joint",
    kept=lambda decision, routes: routes.code,
    menu=_MENU,
    binding="pct_runtime.capabilities.code.descriptor",
)
