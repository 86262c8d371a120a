"""`plan_inputs`: the one function where host facts (platform, shell, Computer Use) join a plan.

`Runtime.plan_inputs` (sessions, console previews) and `pct status` (no started Runtime,
an explicit Computer Use probe) both build their `ProjectionInputs` here, so they can
never disagree about the host.
"""

from __future__ import annotations

from collections.abc import Callable

from pct_runtime.capabilities.computer_use import eligibility
from pct_runtime.config.schema import ToolkitConfig
from pct_runtime.decide.projection import ProjectionInputs
from pct_runtime.host import platform as host_platform
from pct_runtime.host.models import Model, ModelRegistry
from pct_runtime.host.session import SessionKind
from pct_runtime.host.tools import ToolSnapshot


def cheap_computer_use_reason(platform: str) -> str | None:
    """Only the file checks (components, helper): a session start starts no app-server."""
    return eligibility.inspect_runtime().reason if platform == "darwin" else None


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
    computer_use_probe: Callable[[], str | None] | None = None,
) -> ProjectionInputs:
    """`computer_use_probe` replaces the cheap Computer Use check: an explicit status runs
    the full probe (node_repl, Sky target) there."""
    reason = (
        cheap_computer_use_reason(platform) if computer_use_probe is None else computer_use_probe()
    )
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
        computer_use_runtime_reason=reason,
        shell_available=host_platform.shell_available(),
    )
