"""The session port: what capability bindings ask of one session.

Each capability's descriptor declares the small Protocol its binding needs
(`capabilities/<name>/descriptor.py`); `SessionPort` implements all of them over a
session's `SessionServices`, so the runtime binds every capability the same way without
naming one. The managers a capability owns are built by its descriptor through `shared`.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TypeVar

from pct_runtime.config.commands import CommandsFields
from pct_runtime.config.schema import ToolkitConfig
from pct_runtime.debug import DebugSink
from pct_runtime.decide.routes import inspect_image_executor
from pct_runtime.host.models import Model, ModelRegistry
from pct_runtime.host.sandbox import Sandbox
from pct_runtime.invocation import InvocationHooks
from pct_runtime.output import OutputOwner
from pct_runtime.runtime.discovery import SessionDiscovery
from pct_runtime.runtime.managers import output_owner, read_only, session_sandbox
from pct_runtime.runtime.projection import nested_only_message, refusal_for
from pct_runtime.runtime.services import SessionServices

T = TypeVar("T")


class SessionPort:
    """One session as its capabilities' bindings see it."""

    def __init__(self, services: SessionServices) -> None:
        self._services = services

    @property
    def hooks(self) -> InvocationHooks | None:
        return self._services.hooks

    @property
    def agent_dir(self) -> Path:
        return self._services.agent_dir

    @property
    def debug(self) -> DebugSink:
        return self._services.debug

    def admit(self, name: str, path: str) -> None:
        self._services.admit(name, path)

    def admitted(self) -> tuple[str, ...]:
        return self._services.admitted()

    def refusal(self, name: str) -> str | None:
        """What a direct call to `name` gets: None when it works (or before a sync)."""
        plan = self._services.plan()
        if plan is None or name in plan.active:
            return None
        if name in plan.nested_only:
            return nested_only_message(name)
        return refusal_for(name, plan)

    def config(self) -> ToolkitConfig:
        return self._services.config()

    def commands(self) -> CommandsFields:
        return self._services.commands()

    def model(self) -> Model | None:
        return self._services.model()

    def models(self) -> ModelRegistry:
        return self._services.models()

    def on_close(self, closer: Callable[[], Awaitable[None]]) -> None:
        self._services.on_close(closer)

    def shared(
        self,
        key: str,
        factory: Callable[[], T],
        close: Callable[[T], Awaitable[None]] | None = None,
    ) -> T:
        return self._services.shared(key, factory, close)

    def output(self) -> OutputOwner:
        return output_owner(self._services)

    def sandbox(self) -> Sandbox | None:
        return session_sandbox(self._services)

    def read_only(self) -> bool:
        return read_only(self._services)

    def discovery(self) -> SessionDiscovery:
        return SessionDiscovery(self._services)

    def image_executor(self) -> Model | str:
        # The decision layer's choice: the current model's official route, else any
        # available openai-codex, else any openai model.
        inspection = inspect_image_executor(self._services.model(), self._services.models())
        if inspection.ok and inspection.model is not None:
            return inspection.model
        return inspection.reason or "missing-openai-auth"
