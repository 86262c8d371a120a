"""Plans for what the console shows: a fresh session's projection, or a draft's routes.

The runtime's own `fresh_plan` (the same inputs its sessions plan with), so the dashboard and
the rule preview say exactly what a session would get.
"""

from __future__ import annotations

import os

from pct_runtime.config import ToolkitConfig
from pct_runtime.decide.projection import ProjectionPlan
from pct_runtime.host.pi.model_registry import Model
from pct_runtime.runtime import Runtime
from pct_runtime.status import commands_lines, sandbox_lines, status_text


def fresh_plan(
    runtime: Runtime, *, config: ToolkitConfig | None = None, model: Model | None = None
) -> ProjectionPlan:
    """What a new MCP session would get now (the console is attached, so a UI is available)."""
    return runtime.fresh_plan(config=config, model=model, kind="mcp", ui_available=True)


def fresh_status_text(runtime: Runtime) -> str:
    return status_text(
        fresh_plan(runtime),
        config_path=os.fspath(runtime.config_path),
        read_error=runtime.config_error,
        sandbox=[
            *sandbox_lines(runtime.sandbox, runtime.cwd),
            *commands_lines(runtime.commands),
        ],
    )
