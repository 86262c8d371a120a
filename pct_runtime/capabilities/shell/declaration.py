"""Shell Sessions' declaration: its row of the capability list (`capabilities/table.py`).

Cheap to import (`pct status` reads it): the decision layer's primitives and the tools'
names, never the shell manager. Its config section is `config/sections.py`'s
`ShellSessionsConfig`; its route is one of the execution rules (`decide/execution.py`).
"""

from __future__ import annotations

from pct_runtime.decide.context import PlanContext
from pct_runtime.decide.decisions import Decision
from pct_runtime.decide.execution import shell_decision
from pct_runtime.decide.rows import CapabilityRow, MenuEntry, Route, rule_reason
from pct_runtime.host.pi import names


def _shell(ctx: PlanContext) -> Decision:
    return shell_decision(
        ctx.config,
        ctx.routes,
        ctx.any_unavailable(names.SHELL_TOOLS),
        ctx.any_foreign(names.SHELL_TOOLS),
        ctx.inputs.shell_available,
    )


SHELL_NOTE = "  local pipes only; no TTY; commands launch once and are never replayed."


def _status_lines(d: Decision, no_model: bool) -> list[str]:
    """The lines of its `pct status` block after `configured`/`effective`."""
    return [f"  reason: {rule_reason(d, no_model)}", SHELL_NOTE]


ROW = CapabilityRow(
    "shell_sessions",
    "Shell Sessions",
    _status_lines,
    names.SHELL_TOOLS,
    "Shell Sessions are not enabled.",
    planner=Route(names.SHELL_TOOLS, lambda routes: routes.direct_shell, _shell),
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
    binding="pct_runtime.capabilities.shell.descriptor",
)
