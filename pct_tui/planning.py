"""Plans for what the console shows: a fresh session's projection, or a draft's routes.

The same `plan_projection` the runtime commits with, over the runtime's tool registry and
model registry, so the dashboard and the rule preview say exactly what a session would get.
"""

from __future__ import annotations

import os

from pct_runtime.config import ToolkitConfig
from pct_runtime.decide.projection import ProjectionInputs, ProjectionPlan, plan_projection
from pct_runtime.host.models import Model
from pct_runtime.host.platform import computer_use_static_reason, shell_available
from pct_runtime.runtime import Runtime
from pct_runtime.status import format_status


def fresh_plan(
    runtime: Runtime, *, config: ToolkitConfig | None = None, model: Model | None = None
) -> ProjectionPlan:
    """What a new MCP session would get now (the console is attached, so a UI is available)."""
    snapshot = runtime.tool_snapshot()
    return plan_projection(
        ProjectionInputs(
            config=config if config is not None else runtime.config,
            model=model if model is not None else runtime.default_model,
            registry=runtime.models,
            tools=snapshot,
            active=tuple(snapshot.names),
            session_kind="mcp",
            ui_available=True,
            platform=runtime.platform,
            computer_use_runtime_reason=(
                computer_use_static_reason() if runtime.platform == "darwin" else None
            ),
            shell_available=shell_available(),
        )
    )


def fresh_status_text(runtime: Runtime) -> str:
    error = runtime.config_error
    return format_status(
        fresh_plan(runtime),
        config_path=os.fspath(runtime.config_path),
        config_error=error.code if error else None,
        config_error_detail=error.detail if error else None,
    )
