"""What a session needs of its runtime, as a Protocol.

`RuntimeSession` (and the payload hooks) depend on this seam instead of on `Runtime`
itself, so the package's import order runs one way: context → session → core.
`Runtime` satisfies it structurally.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Protocol

from pct_runtime.capabilities.base import CallableTool, Tool
from pct_runtime.config.commands import CommandsFields
from pct_runtime.config.errors import ConfigReadError
from pct_runtime.config.schema import ToolkitConfig
from pct_runtime.debug import DebugSink
from pct_runtime.decide.projection import ProjectionInputs
from pct_runtime.decide.sync import ProjectionSync
from pct_runtime.host.events import EventBus
from pct_runtime.host.pi.model_registry import Model, ModelRegistry
from pct_runtime.host.pi.session import SessionKind
from pct_runtime.host.system.sandbox import SandboxSettings
from pct_runtime.host.ui import UIPort
from pct_runtime.invocation import InvocationHooks
from pct_runtime.runtime.context import CapabilityBinding
from pct_runtime.runtime.journaling import RuntimeJournal


class RuntimeHost(Protocol):
    """The runtime as its sessions see it: shared state, planning and the event bus."""

    agent_dir: Path
    config_path: Path
    hooks: InvocationHooks | None
    config: ToolkitConfig
    config_revision: str
    config_error: ConfigReadError | None
    commands: CommandsFields
    models: ModelRegistry
    events: EventBus
    debug: DebugSink
    sandbox: SandboxSettings
    projection_sync: ProjectionSync
    journal: RuntimeJournal

    @property
    def console_ui(self) -> UIPort | None: ...

    @property
    def extra_tools(self) -> Sequence[Tool | CallableTool]: ...

    @property
    def bindings(self) -> Sequence[CapabilityBinding]: ...

    def plan_inputs(
        self,
        *,
        model: Model | None,
        kind: SessionKind,
        ui_available: bool,
        config: ToolkitConfig | None = None,
        active: tuple[str, ...] | None = None,
        discovered: frozenset[str] = frozenset(),
        native_suppressed: frozenset[str] = frozenset(),
    ) -> ProjectionInputs: ...

    def resolve_model(self, text: str) -> Model: ...

    def forget_session(self, session_id: str) -> None: ...
