"""A session's one context for its capabilities' bindings, and the binding record.

`SessionContext` is what every binding and payload hook is handed
(`capabilities.context.CapabilityContext`): it reads the session and its runtime live — the
current config, model, plan — and holds the session's `Slots`, where the instances shared
between capabilities (the output owner, the sandbox, the shell manager Code Mode also
drives) are built once, under typed keys. Everything registered with `on_close` is torn
down when the session ends; the output owner is closed last, so recovery files live until
then. `CapabilityBinding` names the tools a capability provides and builds them from it.

The bottom of `pct_runtime.runtime` with `ui`: it imports nothing else from the package
but `projection`; it reads its session through `ContextSession`, a Protocol.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from pct_runtime.capabilities.base import CallableTool, NestedCalls, Tool
from pct_runtime.capabilities.code.descriptor import CODE
from pct_runtime.capabilities.context import (
    OUTPUT,
    SANDBOX,
    Closer,
    SessionCatalog,
    Slots,
)
from pct_runtime.capabilities.shell.descriptor import SHELL
from pct_runtime.config.commands import CommandsFields
from pct_runtime.config.schema import ToolkitConfig
from pct_runtime.debug import DebugSink
from pct_runtime.decide.discovery import discovery_state, load_names
from pct_runtime.decide.projection import ProjectionPlan
from pct_runtime.decide.routes import inspect_image_executor
from pct_runtime.host.pi.model_registry import Model, ModelRegistry
from pct_runtime.host.system.sandbox import Sandbox, SandboxSettings
from pct_runtime.output import OutputOwner, capture_root
from pct_runtime.runtime.projection import nested_only_message, refusal_for

if TYPE_CHECKING:
    # What a viewer holds of the managers, named here so a viewer needs no capability import.
    from pct_runtime.capabilities.code.manager import CellView as CellView
    from pct_runtime.capabilities.code.manager import CodeManager
    from pct_runtime.capabilities.shell.job import ShellJob as ShellJob
    from pct_runtime.capabilities.shell.manager import ShellManager

_log = logging.getLogger(__name__)


class ContextRuntime(Protocol):
    """What a session's context reads of its runtime."""

    @property
    def agent_dir(self) -> Path: ...

    @property
    def config(self) -> ToolkitConfig: ...

    @property
    def models(self) -> ModelRegistry: ...

    @property
    def debug(self) -> DebugSink: ...

    @property
    def sandbox(self) -> SandboxSettings: ...

    @property
    def commands(self) -> CommandsFields: ...


class ContextSession(Protocol):
    """What a session's context reads of its session (a `RuntimeSession`)."""

    @property
    def id(self) -> str: ...

    @property
    def cwd(self) -> Path: ...

    @property
    def closed(self) -> bool: ...

    @property
    def model(self) -> Model | None: ...

    @property
    def plan(self) -> ProjectionPlan | None: ...

    @property
    def discovered(self) -> set[str]: ...

    def plan_now(self) -> ProjectionPlan: ...

    def admitted(self) -> tuple[str, ...]: ...

    def describe(self, name: str) -> str | None: ...

    async def sync(self) -> bool: ...


class SessionContext:
    """One session as its capabilities see it; implements `CapabilityContext`."""

    def __init__(
        self,
        session: ContextSession,
        runtime: ContextRuntime,
        calls: NestedCalls,
        slots: Slots,
    ) -> None:
        self._session = session
        self._runtime = runtime
        self._calls = calls
        self._slots = slots

    # -- facts ------------------------------------------------------------------------------
    @property
    def session_id(self) -> str:
        return self._session.id

    @property
    def cwd(self) -> Path:
        return self._session.cwd

    @property
    def agent_dir(self) -> Path:
        return self._runtime.agent_dir

    @property
    def debug(self) -> DebugSink:
        return self._runtime.debug

    @property
    def slots(self) -> Slots:
        return self._slots

    @property
    def calls(self) -> NestedCalls:
        return self._calls

    def config(self) -> ToolkitConfig:
        return self._runtime.config

    def commands(self) -> CommandsFields:
        return self._runtime.commands

    def model(self) -> Model | None:
        return self._session.model

    def models(self) -> ModelRegistry:
        return self._runtime.models

    def admitted(self) -> tuple[str, ...]:
        return self._session.admitted()

    def refusal(self, name: str) -> str | None:
        plan = self._session.plan
        if plan is None or name in plan.active:
            return None
        if name in plan.nested_only:
            return nested_only_message(name)
        return refusal_for(name, plan)

    def image_executor(self) -> Model | str:
        # The decision layer's choice: the current model's official route, else any
        # available openai-codex, else any openai model.
        inspection = inspect_image_executor(self._session.model, self._runtime.models)
        if inspection.ok and inspection.model is not None:
            return inspection.model
        return inspection.reason or "missing-openai-auth"

    # -- what the session builds once -------------------------------------------------------
    def on_close(self, closer: Closer) -> None:
        self._slots.on_close(closer)

    def output(self) -> OutputOwner:
        """The session's one `OutputOwner` (recovery files); closed last, at session end."""

        async def close(owner: OutputOwner) -> None:
            leftovers = await owner.close()
            if leftovers:
                _log.warning("recovery files could not be removed: %s", ", ".join(leftovers))

        return self._slots.get(OUTPUT, OutputOwner, close)

    def sandbox(self) -> Sandbox | None:
        """The session's `Sandbox` (writable roots from its directory); None without one."""
        settings = self._runtime.sandbox
        if not settings.confined:
            return None

        def make() -> Sandbox:
            readable: tuple[Path, ...] = ()  # no capture root: nothing of pct's to read
            with contextlib.suppress(OSError):
                readable = (capture_root(),)  # recovery files: jobs read them, never write
            return Sandbox(settings, self._session.cwd, readable)

        return self._slots.get(SANDBOX, make)

    def read_only(self) -> bool:
        return self._runtime.sandbox.mode == "read-only"

    def discovery(self) -> SessionCatalog:
        return SessionDiscovery(self._session)

    async def aclose(self) -> list[BaseException]:
        """Run every cleanup, newest first; collect failures instead of stopping early."""
        return await self._slots.aclose()


# -- viewers (the console's sessions screen, live control) ----------------------------------
def built_shell(context: SessionContext) -> ShellManager | None:
    """The session's shell manager if it built one; never builds it."""
    return context.slots.peek(SHELL)


def built_code(context: SessionContext) -> CodeManager | None:
    """The session's Code Mode manager if it built one; never builds it."""
    return context.slots.peek(CODE)


# -- find_tools -----------------------------------------------------------------------------
class SessionDiscovery:
    """`find_tools` for one session: its answers over the decision layer, as plain data.

    Every call plans the session's projection afresh (uncommitted) and asks the decision
    layer (`pct_runtime.decide.discovery`) for each managed name's state or load verdict,
    so eligibility is rechecked per name at every call. A successful load records the names
    in the session's `discovered` set (never persisted: a new session starts with none) and
    re-syncs the session, which changes its `tools/list` and notifies MCP clients.
    """

    def __init__(self, session: ContextSession) -> None:
        self._session = session

    def _plan(self) -> ProjectionPlan | None:
        return None if self._session.closed else self._session.plan_now()

    def available(self) -> bool:
        plan = self._plan()
        return plan is not None and plan.loader_available

    def _describe(self, name: str, plan: ProjectionPlan) -> str | None:
        """Our own tool's description; never a foreign winner's (discovery manages only
        Toolkit-owned tools). None: the Toolkit's definition of the name applies."""
        return self._session.describe(name) if plan.tools.owned(name, plan.identity) else None

    def catalog(self) -> Sequence[tuple[str, str | None, str]]:
        plan = self._plan()
        if plan is None:
            return ()
        return tuple(
            (name, self._describe(name, plan), discovery_state(name, plan))
            for name in plan.managed_deferred
        )

    async def load(
        self, names: Sequence[str]
    ) -> tuple[tuple[str, ...], tuple[tuple[str, str], ...]]:
        plan = self._plan()
        if plan is None:
            return (), ()
        result = load_names(list(names), plan)
        discovered = self._session.discovered
        fresh = [name for name in result.loaded if name not in discovered]
        discovered.update(result.loaded)
        if fresh or result.add:
            await self._session.sync()
        return result.loaded, result.rejected


ToolBuilder = Callable[[SessionContext], Sequence[Tool | CallableTool]]


@dataclass(frozen=True)
class CapabilityBinding:
    """A capability's names and the builder of its tools for one session (one-phase tools
    are adapted with `capabilities.base.as_tool`)."""

    capability: str
    names: tuple[str, ...]
    build: ToolBuilder
