"""Computer Use's declaration: its row of the capability list (`capabilities/table.py`).

Cheap to import (`pct status` reads it): the decision layer's primitives and the tools'
names, never the client. Its config section is `config/sections.py`'s
`ComputerUseConfig`; its host probe is `probe.py`, which `pct status` loads (the
descriptor it does not).
"""

from __future__ import annotations

from pct_runtime.decide.context import PlanContext
from pct_runtime.decide.decisions import DASH, Decision, decide_computer_use
from pct_runtime.decide.rows import CapabilityRow, Gated, MenuEntry
from pct_runtime.host.pi import names


def _computer_use(ctx: PlanContext) -> Decision:
    return decide_computer_use(
        ctx.config.computer_use.enabled,
        ctx.inputs.platform,
        ctx.inputs.ui_available,
        ctx.model,
        ctx.inputs.host_reasons.get("computer_use"),
    )


_MENU = (
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

COMPUTER_USE_NOTE = "  experimental local bridge through ChatGPT.app node_repl and @oai/sky."


def _status_lines(d: Decision, no_model: bool) -> list[str]:
    """The lines of its `pct status` block after `configured`/`effective`."""
    return [f"  transport: {d.transport or DASH}", f"  reason: {d.reason}", COMPUTER_USE_NOTE]


ROW = CapabilityRow(
    "computer_use",
    "Computer Use",
    _status_lines,
    names.COMPUTER_USE_TOOLS,
    "Computer Use is not active for the current session.",
    planner=Gated(names.COMPUTER_USE_TOOLS, _computer_use),
    load_group="atomic",
    menu=_MENU,
    # Deferred by Tool Discovery is hidden until loaded, not disabled.
    kept=lambda decision, routes: decision.effective in ("active", "deferred"),
    binding="pct_runtime.capabilities.computer_use.descriptor",
    probe="pct_runtime.capabilities.computer_use.probe",
)
