"""Apply Patch's declaration: its row of the capability list (`capabilities/table.py`).

Cheap to import (`pct status` reads it): the decision layer's primitives and the tool's
name, never the patch engine. Its config section is `config/sections.py`'s
`ApplyPatchConfig`; its route is one of the execution rules (`decide/execution.py`).
"""

from __future__ import annotations

from pct_runtime.decide.context import PlanContext
from pct_runtime.decide.decisions import Decision
from pct_runtime.decide.execution import patch_decision
from pct_runtime.decide.rows import CapabilityRow, MenuEntry, Route, rule_reason
from pct_runtime.host.pi import names

_TOOLS = (names.APPLY_PATCH_TOOL,)


def _patch(ctx: PlanContext) -> Decision:
    return patch_decision(
        ctx.config, ctx.routes, ctx.any_unavailable(_TOOLS), ctx.any_foreign(_TOOLS)
    )


def _status_lines(d: Decision, no_model: bool) -> list[str]:
    """The lines of its `pct status` block after `configured`/`effective`."""
    return [f"  reason: {rule_reason(d, no_model)}"]


ROW = CapabilityRow(
    "apply_patch",
    "Apply Patch",
    _status_lines,
    _TOOLS,
    "Apply Patch is not enabled.",
    planner=Route(_TOOLS, lambda routes: routes.direct_patch, _patch),
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
    binding="pct_runtime.capabilities.apply_patch.descriptor",
)
