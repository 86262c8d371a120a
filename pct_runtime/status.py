"""The `/pct status` text, byte for byte (`reference/toolkit.md` §3.3), from a plan alone.

Every `key: value` line keeps its space after the colon even when the value is empty
(`  reason: `), and placeholders are `—` (U+2014).
"""

from __future__ import annotations

from pathlib import Path

from pct_runtime.config.errors import ConfigReadError
from pct_runtime.decide.decisions import DASH, Decision
from pct_runtime.decide.execution import format_execution_block
from pct_runtime.decide.projection import ProjectionPlan
from pct_runtime.host.sandbox import SandboxSettings, enforcement, writable_roots

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


NO_MODEL_REASON = "current-model-missing"
NO_MODEL_LINE = (
    "No current model, so no execution rule can match. Set one: `pct-tui --model PROVIDER/ID`, "
    "`pct serve --model PROVIDER/ID`, or defaultProvider and defaultModel in Pi's settings.json."
)


def _reason(decision: Decision, no_model: bool) -> str:
    """A rule-managed tool that is off only because no model is known says so."""
    if no_model and not decision.reason and decision.effective == "off":
        return NO_MODEL_REASON
    return decision.reason


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

    d = plan.decisions
    ws = d["web_search"]
    lines += [
        "Web Search:",
        *_head(ws),
        f"  requested backend: {ws.requested_backend}",
        f"  effective backend: {ws.effective_backend}",
        f"  web search executor: {ws.executor}",
        f"  web search executor effort: {ws.executor_effort}",
        f"  reason: {ws.reason}",
        SIDECAR_NOTE,
    ]
    rc = d["remote_compaction"]
    lines += ["Remote Compaction:", *_head(rc), f"  reason: {rc.reason}", REMOTE_NOTE]
    img = d["image_generation"]
    lines += [
        "Image Generation:",
        *_head(img),
        f"  backend: {img.backend or DASH}",
        f"  reason: {img.reason}",
    ]
    patch = d["apply_patch"]
    lines += ["Apply Patch:", *_head(patch), f"  reason: {_reason(patch, no_model)}"]
    cu = d["computer_use"]
    lines += [
        "Computer Use:",
        *_head(cu),
        f"  transport: {cu.transport or DASH}",
        f"  reason: {cu.reason}",
        COMPUTER_USE_NOTE,
    ]
    shell = d["shell_sessions"]
    lines += [
        "Shell Sessions:",
        *_head(shell),
        f"  reason: {_reason(shell, no_model)}",
        SHELL_NOTE,
    ]
    code = d["code_mode"]
    lines += ["Code Mode:", *_head(code), f"  reason: {_reason(code, no_model)}", CODE_NOTE]
    disc = d["tool_discovery"]
    lines += [
        "Tool Discovery:",
        *_head(disc),
        f"  reason: {disc.reason}",
        f"  managed deferred tools: {disc.managed or 0}",
        f"  loaded this session: {disc.loaded or 0}",
        DISCOVERY_NOTE,
    ]
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
