"""`plan_inputs`: the one function where host facts (platform, shell, host probes) join a plan.

`Runtime.plan_inputs` (sessions, console previews) and `pct status` (no started Runtime,
an explicit full probe) both build their `ProjectionInputs` here, so they can never
disagree about the host. A capability with a host requirement names its probe's module on
its row (`CapabilityRow.probe`); the verdicts reach the decision layer by capability key.
"""

from __future__ import annotations

from pct_runtime.capabilities.table import host_probes
from pct_runtime.config.schema import ToolkitConfig
from pct_runtime.decide.projection import ProjectionInputs
from pct_runtime.host.pi.model_registry import Model, ModelRegistry
from pct_runtime.host.pi.session import SessionKind
from pct_runtime.host.pi.tool_registry import ToolSnapshot
from pct_runtime.host.system import platform as host_platform


def plan_inputs(
    *,
    config: ToolkitConfig,
    model: Model | None,
    registry: ModelRegistry,
    tools: ToolSnapshot,
    kind: SessionKind,
    ui_available: bool,
    platform: str,
    active: tuple[str, ...] | None = None,
    discovered: frozenset[str] = frozenset(),
    native_suppressed: frozenset[str] = frozenset(),
    full_probe: bool = False,
) -> ProjectionInputs:
    """`full_probe` is an explicit `pct status`: the probes may start helper processes
    there (each only when its cheaper checks pass); a session start runs file checks only."""
    reasons = {
        key: probe(config, platform, ui_available, model, full_probe)
        for key, probe in host_probes().items()
    }
    return ProjectionInputs(
        config=config,
        model=model,
        registry=registry,
        tools=tools,
        active=tuple(tools.names) if active is None else active,
        session_kind=kind,
        ui_available=ui_available,
        discovered=discovered,
        native_suppressed=native_suppressed,
        platform=platform,
        host_reasons=reasons,
        shell_available=host_platform.shell_available(),
    )
