"""The Runtime: one config store, one host, many sessions — the one API for every UI.

The MCP server, the console and Python embedders all go through this module: they open a
`RuntimeSession` (one per MCP connection or embedder conversation), list the tools of
its current projection, call tools by name, and subscribe to the runtime's events.

Lifecycle: opening a session syncs its projection; closing it cleans up its shell jobs, code
cells and recovery files; a model change or an unchanged `reload` keeps them, so running
work and its output survive anything short of the session's end.

Embedder example::

    async with Runtime(hooks=InvocationHooks(policy=my_policy)) as runtime:
        session = await runtime.open_session("embedded", model="openai/gpt-5.1")
        result = await session.call("apply_patch", {"patch": text})
"""

from __future__ import annotations

import asyncio
import enum
import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, TextIO

from pct_runtime.capabilities.base import CallableTool, Tool
from pct_runtime.capabilities.table import CAPABILITIES
from pct_runtime.config import default_config
from pct_runtime.config.commands import CommandsFields, commands_in
from pct_runtime.config.errors import ConfigReadError, reload_message
from pct_runtime.config.paths import CONFIG_FILE_NAME
from pct_runtime.config.paths import agent_dir as default_agent_dir
from pct_runtime.config.reload import reload_store
from pct_runtime.config.schema import ToolkitConfig
from pct_runtime.config.store import ConfigRead, ConfigStore
from pct_runtime.debug import DebugSink
from pct_runtime.decide.projection import ProjectionInputs, ProjectionPlan, plan_projection
from pct_runtime.decide.sync import ProjectionSync
from pct_runtime.host.events import EventBus
from pct_runtime.host.pi.model_registry import Model, ModelRegistry, load_settings
from pct_runtime.host.pi.names import NATIVE_TOOLS
from pct_runtime.host.pi.session import SessionKind
from pct_runtime.host.pi.tool_registry import RUNTIME_OWNER, ToolRegistry, ToolSnapshot
from pct_runtime.host.system import platform as host_platform
from pct_runtime.host.system import sandbox as host_sandbox
from pct_runtime.host.system.sandbox import SandboxSettings, SandboxUnavailableError
from pct_runtime.host.ui import UIPort
from pct_runtime.invocation import InvocationHooks
from pct_runtime.runtime.context import CapabilityBinding
from pct_runtime.runtime.descriptors import default_bindings
from pct_runtime.runtime.inputs import plan_inputs as host_plan_inputs
from pct_runtime.runtime.journaling import RuntimeJournal
from pct_runtime.runtime.projection import ModelRef, Projection
from pct_runtime.runtime.session import RUNTIME_EVENTS_CHANNEL, RuntimeSession

__all__ = [
    "EMBEDDER_OWNER",
    "RUNTIME_EVENTS_CHANNEL",
    "InvocationHooks",
    "ModelRef",
    "Projection",
    "ReloadOutcome",
    "Runtime",
    "RuntimeSession",
    "UnknownModelError",
]

_log = logging.getLogger(__name__)

#: Owner identity of tools an embedder (or a test) registers through `extra_tools`.
EMBEDDER_OWNER = "embedder"


class _Unset(enum.Enum):
    """`open_session(model=...)` not given: the runtime's default model (None means none)."""

    UNSET = enum.auto()


_UNSET = _Unset.UNSET


class UnknownModelError(ValueError):
    """A `PROVIDER/ID` the model registry does not know."""


@dataclass(frozen=True)
class ReloadOutcome:
    """The result of `Runtime.reload()`: `ok` and the spec's message text."""

    ok: bool
    message: str


class Runtime:
    """Owns the config store, the model registry, the tool registry and every live session.

    Build it, `await start()`, open sessions, `await aclose()` at the end (or use it as an
    async context manager). `hooks` are the embedder's invocation hooks, applied to direct
    and nested calls alike. `allowlist` is the host allowlist (`pct serve --tools`).
    `extra_tools` are registrations of a foreign owner (an embedder, a test): they win
    their names, exactly like another extension would. `debug_stream` is where `debug:
    true` lines are written besides the `pct.debug` channel: the process's stderr by
    default, None for none (a full-screen UI).
    """

    def __init__(
        self,
        *,
        agent_dir: Path | None = None,
        model: str | Model | None = None,
        allowlist: Sequence[str] | None = None,
        hooks: InvocationHooks | None = None,
        extra_tools: Sequence[Tool | CallableTool] = (),
        bindings: Sequence[CapabilityBinding] | None = None,
        cwd: Path | None = None,
        platform: str | None = None,
        debug_stream: TextIO | Literal["stderr"] | None = "stderr",
        sandbox: SandboxSettings | None = None,
    ) -> None:
        self.events = EventBus()
        #: `debug: true` metadata (one JSON line per OpenAI or Computer Use request) on
        #: `pct.debug`, and on `debug_stream` unless that is None (the console's choice:
        #: it owns the terminal). Enabled live from the current config.
        self.debug = DebugSink(
            lambda: bool(getattr(self.config, "debug", False)),
            bus=self.events,
            stream=None if debug_stream == "stderr" else debug_stream,
            write=debug_stream is not None,
        )
        self.agent_dir = Path(agent_dir) if agent_dir is not None else default_agent_dir()
        self.config_path: Path = self.agent_dir / "extensions" / CONFIG_FILE_NAME
        self.hooks = hooks
        self.allowlist: frozenset[str] | None = (
            frozenset(allowlist) if allowlist is not None else None
        )
        self.cwd = Path(cwd) if cwd is not None else Path.cwd()
        #: `--sandbox`: every session's shell jobs and Code Mode workers run confined by it.
        self.sandbox: SandboxSettings = sandbox if sandbox is not None else SandboxSettings()
        self.platform = platform or host_platform.current_platform()
        self._requested_model = model
        self.default_model: Model | None = model if isinstance(model, Model) else None
        self.models: ModelRegistry = ModelRegistry.builtin()
        self._store = ConfigStore(self.config_path)
        self.config: ToolkitConfig = default_config()
        self.config_revision: str = "missing"
        self.config_error: ConfigReadError | None = None
        #: `pct.commands` of the config in force (the command policy every session judges by).
        self.commands: CommandsFields = CommandsFields()
        self.projection_sync: ProjectionSync = ProjectionSync(self.events)
        self._bindings = list(bindings) if bindings is not None else default_bindings()
        self._extra_tools = list(extra_tools)
        self.tool_registry = self._build_registry()
        self._sessions: dict[str, RuntimeSession] = {}
        self._console_ui: UIPort | None = None
        self._remote_ui: UIPort | None = None
        self._started = False
        self._closed = False
        #: The journal of every call (`<agent dir>/pct/journal.sqlite3`), on after start.
        self.journal = RuntimeJournal(
            self.agent_dir, lambda event: self.events.publish(RUNTIME_EVENTS_CHANNEL, event)
        )

    def _build_registry(self) -> ToolRegistry:
        registry = ToolRegistry.with_natives(allowlist=self.allowlist)
        for binding in self._bindings:
            for name in binding.names:
                registry.register(name, RUNTIME_OWNER)
        for tool in self._extra_tools:
            registry.register(tool.spec.name, EMBEDDER_OWNER, tool.spec.description)
        return registry

    @property
    def extra_tools(self) -> list[Tool | CallableTool]:
        return list(self._extra_tools)

    @property
    def bindings(self) -> list[CapabilityBinding]:
        return list(self._bindings)

    def tool_snapshot(self) -> ToolSnapshot:
        return self.tool_registry.snapshot()

    # ----------------------------------------------------------------- planning
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
    ) -> ProjectionInputs:
        """This runtime's host facts joined to a plan by `inputs.plan_inputs` (the one place).

        Sessions, the console's previews and anything else that asks "what would a session
        get" go through here, so they can never disagree about the host.
        """
        return host_plan_inputs(
            config=self.config if config is None else config,
            model=model,
            registry=self.models,
            tools=self.tool_snapshot(),
            kind=kind,
            ui_available=ui_available,
            platform=self.platform,
            active=active,
            discovered=discovered,
            native_suppressed=native_suppressed,
        )

    def fresh_plan(
        self,
        *,
        config: ToolkitConfig | None = None,
        model: Model | None = None,
        kind: SessionKind = "mcp",
        ui_available: bool = True,
    ) -> ProjectionPlan:
        """What a new session would get now (a draft `config` previews a save)."""
        return plan_projection(
            self.plan_inputs(
                config=config,
                model=self.default_model if model is None else model,
                kind=kind,
                ui_available=ui_available,
            ),
            CAPABILITIES,
        )

    # ----------------------------------------------------------------- lifecycle
    async def __aenter__(self) -> Runtime:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def start(self) -> None:
        """Read the config, Pi's models/auth/settings; resolve the default model.

        Raises `UnknownModelError` when an explicit `model` is not in the registry, and
        `SandboxUnavailableError` when `sandbox` cannot be enforced on this host (an embedder
        that asked for a sandbox never gets unconfined jobs).
        """
        if self._started:
            return
        if self.sandbox.confined:
            reason = await asyncio.to_thread(
                host_sandbox.unsupported_reason, self.sandbox, self_test=False
            )
            if reason is not None:
                raise SandboxUnavailableError(reason)
        self._started = True
        self.models = await asyncio.to_thread(ModelRegistry.load, self.agent_dir)
        requested = self._requested_model
        if isinstance(requested, str):
            self.default_model = self.resolve_model(requested)
        elif requested is None:
            # Pi's merge: the project's .pi/settings.json (in the runtime's cwd) wins.
            settings = await asyncio.to_thread(load_settings, self.agent_dir, self.cwd)
            self.default_model = self.models.default_model(settings)
        await self._read_config()
        await self.journal.start()

    def resolve_model(self, text: str) -> Model:
        """`PROVIDER/ID` (split at the first `/`) → the registry's model, or raise."""
        ref = ModelRef.parse(text)
        model = self.models.find(ref.provider, ref.id)
        if model is None:
            raise UnknownModelError(f"unknown model {text}: not in Pi's model registry")
        return model

    async def aclose(self) -> None:
        """End every session (cleaning up its work) and refuse new ones."""
        self._closed = True
        self.journal.drain()  # rows of answered calls first: cleanup can outlast the process
        for session in list(self._sessions.values()):
            await session.close()
        await self.journal.aclose()

    @property
    def closed(self) -> bool:
        return self._closed

    @property
    def sessions(self) -> list[RuntimeSession]:
        return list(self._sessions.values())

    # ----------------------------------------------------------------- config
    @property
    def store(self) -> ConfigStore:
        """The `ConfigStore` (the console saves through it, then calls `config_changed()`)."""
        return self._store

    def _take(self, read: ConfigRead) -> None:
        self.config = read.config
        self.config_revision = read.revision
        self.config_error = read.error
        self.commands = commands_in(read.raw)

    async def _read_config(self) -> ConfigRead:
        read = await asyncio.to_thread(self._store.read)
        self._take(read)
        return read

    async def reload(self) -> ReloadOutcome:
        """Re-read the config file (and Pi's settings.json default model, unless one was
        given) and resync every session (spec `/pct reload`).

        Never writes the file. On a read failure the last known good config (or the
        all-off defaults) stays in force and the message says which. Sessions keep their
        running work either way.
        """
        message, ok = await asyncio.to_thread(reload_store, self._store)
        if self._requested_model is None:
            # Pi's settings.json may name another default model since the start; new
            # sessions get it (open ones keep theirs).
            settings = await asyncio.to_thread(load_settings, self.agent_dir, self.cwd)
            self.default_model = self.models.default_model(settings)
        self._take(self._store.current())
        await self.journal.refresh()
        for session in list(self._sessions.values()):
            await session.sync()
        outcome = ReloadOutcome(ok, message)
        self.events.publish(
            RUNTIME_EVENTS_CHANNEL, {"type": "reloaded", "ok": ok, "message": message}
        )
        return outcome

    async def config_changed(self) -> None:
        """Adopt the store's current state (after a save) and resync every session."""
        self._take(self._store.current())
        for session in list(self._sessions.values()):
            await session.sync()

    def live_status_text(self, label: str) -> str:
        """What `pct status --live` prints: this runtime, then each session's status text."""
        lines = [label]
        last_known_good = self.config_error is not None and self._store.has_last_known_good
        if self.config_error is not None:
            # The runtime's own view: after a broken reload it keeps its last known good
            # settings, which plain `pct status` (reading the file as it is now) cannot show.
            using = "last known good settings" if last_known_good else "all-off defaults"
            lines.append(f"Config error: {self.config_error}; using {using}.")
        lines.append(f"Sessions: {len(self._sessions)}")
        for session in self._sessions.values():
            lines.append("")
            lines.append(
                f"Session {session.id} ({session.kind}); "
                f"MCP tools: {', '.join(session.projection.visible) or 'none'}"
            )
            lines.append(session.status_text())
        if not self._sessions:
            lines.append("")
            if last_known_good:
                lines.append(
                    "No session is open; a new one would get this runtime's last known good "
                    "settings (`pct status` reads the broken file as it is now)."
                )
            else:
                lines.append("No session is open; `pct status` shows what a fresh one would get.")
        return "\n".join(lines)

    # ----------------------------------------------------------------- UI
    @property
    def console_ui(self) -> UIPort | None:
        """The console route: the embedded console when it can ask, else a remote one."""
        embedded = self._console_ui
        if embedded is not None and (embedded.available or self._remote_ui is None):
            return embedded
        return self._remote_ui

    def attach_remote_ui(self, ui: UIPort) -> Callable[[], None]:
        """Attach remote consoles' port (live control); the embedded console still asks
        first. Returns a detach function."""
        self._remote_ui = ui
        self._resync_soon()

        def detach() -> None:
            if self._remote_ui is ui:
                self._remote_ui = None
                self._resync_soon()

        return detach

    def attach_ui(self, ui: UIPort) -> Callable[[], None]:
        """Attach the console's UI port; approvals go to it first. Returns a detach function."""
        self._console_ui = ui
        self._resync_soon()

        def detach() -> None:
            if self._console_ui is ui:
                self._console_ui = None
                self._resync_soon()

        return detach

    def _resync_soon(self) -> None:
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            return
        for session in list(self._sessions.values()):
            session.sync_soon()

    # ----------------------------------------------------------------- sessions
    async def open_session(
        self,
        kind: SessionKind = "mcp",
        *,
        ui: UIPort | None = None,
        model: str | Model | _Unset | None = _UNSET,
        cwd: Path | None = None,
        session_id: str | None = None,
    ) -> RuntimeSession:
        """Open a session and sync its projection. `ui` is its own fallback UI port.

        `model` defaults to the runtime's model (`--model`, else Pi's settings.json).
        """
        if self._closed:
            raise RuntimeError("the runtime is closed")
        await self.start()
        if model is _UNSET:
            chosen = self.default_model
        elif isinstance(model, str):
            chosen = self.resolve_model(model)
        else:
            chosen = model
        session = RuntimeSession(
            self,
            session_id=session_id,
            kind=kind,
            model=chosen,
            cwd=Path(cwd) if cwd is not None else self.cwd,
            ui=ui,
        )
        self._sessions[session.id] = session
        await session.sync(initial=True)
        if self.config_error is not None and session.ui.available:
            # Spec: a failed read at session start is shown once, as the reload message,
            # when a person can see it (the console); headless sessions use status.
            session.ui.notify(
                reload_message(self.config_error, self._store.has_last_known_good), "warning"
            )
        self.events.publish(
            RUNTIME_EVENTS_CHANNEL,
            {
                "type": "session-opened",
                "session": session.id,
                "kind": kind,
                "model": chosen.key if chosen else None,
            },
        )
        return session

    def session(self, session_id: str) -> RuntimeSession | None:
        return self._sessions.get(session_id)

    def forget_session(self, session_id: str) -> None:
        """Drop a closed session (its `close()` calls this last)."""
        self._sessions.pop(session_id, None)
        self.projection_sync.forget(session_id)


def native_names() -> tuple[str, ...]:
    """Pi's native tool names: the agent's own tools, never served by pct over MCP."""
    return NATIVE_TOOLS
