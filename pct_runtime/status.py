"""The `/pct status` text, from a plan alone, byte for byte the original Toolkit's.

Every `key: value` line keeps its space after the colon even when the value is empty
(`  reason: `), and placeholders are `—` (U+2014).
"""

from __future__ import annotations

from pathlib import Path

from pct_runtime.config.commands import CommandsFields
from pct_runtime.config.errors import ConfigReadError
from pct_runtime.decide.decisions import DASH, Decision
from pct_runtime.decide.execution import format_execution_block
from pct_runtime.decide.projection import ProjectionPlan
from pct_runtime.host.system.sandbox import SandboxSettings, enforcement, writable_roots

SANDBOX_NOTE = "  covers every shell job and Code Mode worker; set with --sandbox or pct.sandbox."
NO_SANDBOX_NOTE = (
    "  no sandbox: pass --sandbox workspace-write (or set pct.sandbox.mode) to confine shell "
    "jobs and Code Mode workers."
)


def sandbox_lines(settings: SandboxSettings, cwd: Path) -> list[str]:
    """The `Sandbox:` block: mode, writable roots, network and the kernel mechanism."""
    roots = writable_roots(settings, cwd)
    if not settings.confined:
        where = "everywhere (no sandbox: jobs run with the user's own permissions)"
    else:
        where = ", ".join(str(root) for root in roots) or "none (read-only)"
    return [
        "Sandbox:",
        f"  mode: {settings.mode}",
        f"  writable roots: {where}",
        f"  network: {'on' if settings.network_allowed else 'off'}",
        f"  enforced by: {enforcement(settings)}",
        SANDBOX_NOTE if settings.confined else NO_SANDBOX_NOTE,
    ]


COMMANDS_NOTE = (
    "  judged: every simple command an exec_command line would run, direct and in Code Mode; "
    "write_stdin input is not."
)


def commands_lines(fields: CommandsFields, problem: str | None = None) -> list[str]:
    """The `Commands:` block: the command policy's default and its rules in order."""
    lines = ["Commands:"]
    if problem is not None:
        lines.append(f"  config error: {problem}")
    lines.append(f"  default: {fields.default}")
    if not fields.rules:
        lines.append("  rules: none (set pct.commands.rules to ask about or deny commands)")
    else:
        lines.append(f"  rules: {len(fields.rules)}")
        lines += [f"    {rule.decision}: {rule.prefix}" for rule in fields.rules]
    lines.append(COMMANDS_NOTE)
    return lines


NO_MODEL_LINE = (
    "No current model, so no execution rule can match. Set one: `pct-tui --model PROVIDER/ID`, "
    "`pct serve --model PROVIDER/ID`, or defaultProvider and defaultModel in Pi's settings.json."
)


def _head(decision: Decision) -> list[str]:
    return [
        f"  configured: {'on' if decision.configured else 'off'}",
        f"  effective: {decision.effective}",
    ]


def format_status(
    plan: ProjectionPlan,
    *,
    config_path: str,
    config_error: str | None = None,
    config_error_detail: str | None = None,
    apply_error: str | None = None,
    sandbox: list[str] | None = None,
) -> str:
    """Render the status text. `config_error` is a read-error code (`invalid-json`,
    `invalid-config`, `config-read-failed`) with optional detail; `apply_error` is the
    fixed text `ProjectionSync.apply_error` reports. `sandbox` (from `sandbox_lines`) is
    appended after the toolkit's own blocks, which stay byte for byte."""
    model = plan.model
    lines = [
        "Pi Codex Toolkit",
        f"Config: {config_path}",
        f"Current model: {model.key if model else DASH}",
        f"Current API: {model.api if model else DASH}",
    ]
    no_model = plan.rules_managed and model is None
    if plan.rules_managed:
        lines.extend(format_execution_block(plan.routes).split("\n"))
    if no_model:
        lines.append(NO_MODEL_LINE)
    if config_error:
        detail = f" ({config_error_detail})" if config_error_detail else ""
        lines.append(f"Config error: {config_error}{detail}")
    if apply_error:
        lines.append(f"Apply error: {apply_error}")

    for row in plan.rows:
        decision = plan.decisions[row.key]
        lines += [f"{row.title}:", *_head(decision), *row.status_rows(decision, no_model)]
    if sandbox:
        lines += sandbox
    return "\n".join(lines)


def status_text(
    plan: ProjectionPlan,
    *,
    config_path: str,
    read_error: ConfigReadError | None,
    apply_error: str | None = None,
    sandbox: list[str] | None = None,
) -> str:
    """`format_status` for a config read as it came back from the store: the one place the
    read error becomes the status's config-error fields (sessions, `pct status`, the
    console's dashboard)."""
    return format_status(
        plan,
        config_path=config_path,
        config_error=read_error.code if read_error else None,
        config_error_detail=read_error.detail if read_error else None,
        apply_error=apply_error,
        sandbox=sandbox,
    )
