"""The Runtime: one config store, one host, many sessions — the one API for every UI.

The MCP server, the console and Python embedders all go through this module: they open a
`RuntimeSession` (one per MCP connection or embedder conversation), list the tools of
its current projection, call tools by name, and subscribe to the runtime's events.

Lifecycle (spec, 执行输出恢复与 session 生命周期): opening a session syncs its projection;
closing it cleans up its shell jobs, code cells and recovery files; a model change or an
unchanged `reload` keeps them.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pct_runtime.capabilities.base import (
    CallContext,
    ProgressSink,
    Tool,
    ToolError,
    ToolResult,
    ToolSpec,
)
from pct_runtime.host.events import EXECUTION_DIAGNOSTICS_CHANNEL, EventBus
from pct_runtime.host.ui import UIPort
from pct_runtime.invocation import InvocationCall, InvocationHooks, resolve_invocation
from pct_runtime.runtime_projection import (
    INACTIVE_MESSAGES,
    ModelRef,
    PlanInputs,
    Projection,
    ProjectionPlanner,
    SessionKind,
    legacy_flags_planner,
)
from pct_runtime.runtime_tools import CapabilityBinding, SessionServices, default_bindings
from pct_runtime.runtime_ui import RoutedUI

__all__ = [
    "RUNTIME_EVENTS_CHANNEL",
    "InvocationHooks",
    "ModelRef",
    "Projection",
    "ReloadOutcome",
    "Runtime",
    "RuntimeSession",
]

_log = logging.getLogger(__name__)

#: Channel of runtime state events: dicts with a `type` key (`session-opened`,
#: `session-closed`, `projection-changed`, `model-changed`, `reloaded`, `call-started`,
#: `call-finished`). Never carries command, patch or program text.
RUNTIME_EVENTS_CHANNEL = "pct.runtime"

_HOOKED_TOOLS = frozenset({"exec_command", "write_stdin", "apply_patch"})

_UNSET: Any = object()


@dataclass(frozen=True)
class ReloadOutcome:
    """The result of `Runtime.reload()`: `ok` and the spec's message text."""

    ok: bool
    message: str


def parse_model(text: str | None) -> ModelRef | None:
    """`PROVIDER/ID` (split at the first `/`), or None for None/empty."""
    if not text:
        return None
    return ModelRef.parse(text)


def settings_default_model(agent_dir: Path) -> ModelRef | None:
    """Pi's `settings.json` default (`defaultProvider` + `defaultModel`), else None."""
    try:
        raw = json.loads((agent_dir / "settings.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(raw, dict):
        return None
    provider, model_id = raw.get("defaultProvider"), raw.get("defaultModel")
    if isinstance(provider, str) and provider and isinstance(model_id, str) and model_id:
        return ModelRef(provider, model_id)
    return None


class Runtime:
    """Owns the config store, the host-facing registrations and every live session.

    Build it, `await start()`, open sessions, `await aclose()` at the end (or use it as an
    async context manager). `hooks` are the embedder's invocation hooks, applied to direct
    and nested calls alike. `allowlist` is the host allowlist (`pct serve --tools`).
    `extra_tools` are registrations of a foreign owner (an embedder, a test).
    """

    def __init__(
        self,
        *,
        agent_dir: Path | None = None,
        model: ModelRef | str | None = None,
        allowlist: Sequence[str] | None = None,
        hooks: InvocationHooks | None = None,
        extra_tools: Sequence[Tool] = (),
        planner: ProjectionPlanner | None = None,
        bindings: Sequence[CapabilityBinding] | None = None,
        cwd: Path | None = None,
    ) -> None:
        from pct_runtime.config import default_config
        from pct_runtime.config.paths import CONFIG_FILE_NAME
        from pct_runtime.config.paths import agent_dir as default_agent_dir
        from pct_runtime.config.store import ConfigStore

        self.events = EventBus()
        self.agent_dir = Path(agent_dir) if agent_dir is not None else default_agent_dir()
        self.config_path: Path = self.agent_dir / "extensions" / CONFIG_FILE_NAME
        self.hooks = hooks
        self.allowlist: frozenset[str] | None = (
            frozenset(allowlist) if allowlist is not None else None
        )
        self.cwd = Path(cwd) if cwd is not None else Path.cwd()
        self._explicit_model = model is not None
        self.default_model: ModelRef | None = (
            parse_model(model) if isinstance(model, str) else model
        ) or settings_default_model(self.agent_dir)
        self._store = ConfigStore(self.config_path)
        self.config: Any = default_config()
        self.config_revision: str | None = None
        self.config_error: Any = None
        self._planner: ProjectionPlanner = planner or legacy_flags_planner
        self._bindings = list(bindings) if bindings is not None else default_bindings()
        self._extra_tools = list(extra_tools)
        self._sessions: dict[str, RuntimeSession] = {}
        self._console_ui: UIPort | None = None
        self._started = False
        self._closed = False

    # ----------------------------------------------------------------- lifecycle
    async def __aenter__(self) -> Runtime:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def start(self) -> None:
        """Read the config once (a missing file means all-off defaults)."""
        if not self._started:
            self._started = True
            await self._read_config()

    async def aclose(self) -> None:
        """End every session (cleaning up its work) and refuse new ones."""
        self._closed = True
        for session in list(self._sessions.values()):
            await session.close()

    @property
    def sessions(self) -> list[RuntimeSession]:
        return list(self._sessions.values())

    # ----------------------------------------------------------------- config
    @property
    def store(self) -> Any:
        """The `ConfigStore` (the console saves through it, then calls `config_changed()`)."""
        return self._store

    def _take(self, read: Any) -> None:
        self.config, self.config_revision, self.config_error = (
            read.config,
            read.revision,
            read.error,
        )

    async def _read_config(self) -> Any:
        read = await asyncio.to_thread(self._store.read)
        self._take(read)
        return read

    async def reload(self) -> ReloadOutcome:
        """Re-read the config file and resync every session (spec `/pct reload`).

        Never writes the file. On a read failure the last known good config (or the
        all-off defaults) stays in force and the message says which. Sessions keep their
        running work either way.
        """
        from pct_runtime.config.reload import reload_store

        message, ok = await asyncio.to_thread(reload_store, self._store)
        self._take(self._store.current())
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
        """What `pct status --live` prints for this runtime: config state and each session."""
        lines = [label, f"Config: {self.config_path}"]
        if self.config_error is not None:
            lines.append(f"Config error: {self.config_error}")
        lines.append(f"Sessions: {len(self._sessions)}")
        for session in self._sessions.values():
            tools = ", ".join(session.projection.visible) or "none"
            lines.append(
                f"  {session.id}  {session.kind}  "
                f"model: {_model_text(session.model) or '—'}  tools: {tools}"
            )
        return "\n".join(lines)

    # ----------------------------------------------------------------- UI
    @property
    def console_ui(self) -> UIPort | None:
        return self._console_ui

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
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return
        for session in list(self._sessions.values()):
            task = loop.create_task(session.sync())
            session._background.add(task)
            task.add_done_callback(session._background.discard)

    # ----------------------------------------------------------------- sessions
    async def open_session(
        self,
        kind: SessionKind = "mcp",
        *,
        ui: UIPort | None = None,
        model: ModelRef | str | None = _UNSET,
        cwd: Path | None = None,
        session_id: str | None = None,
    ) -> RuntimeSession:
        """Open a session and sync its projection. `ui` is its fallback UI port."""
        if self._closed:
            raise RuntimeError("the runtime is closed")
        await self.start()
        if model is _UNSET:
            chosen = self.default_model
        else:
            chosen = parse_model(model) if isinstance(model, str) else model
        session = RuntimeSession(
            self,
            session_id=session_id or f"pct-session-{uuid.uuid4().hex[:12]}",
            kind=kind,
            model=chosen,
            cwd=Path(cwd) if cwd is not None else self.cwd,
            ui=ui,
        )
        self._sessions[session.id] = session
        await session.sync(initial=True)
        self.events.publish(
            RUNTIME_EVENTS_CHANNEL,
            {
                "type": "session-opened",
                "session": session.id,
                "kind": kind,
                "model": _model_text(chosen),
            },
        )
        return session

    def session(self, session_id: str) -> RuntimeSession | None:
        return self._sessions.get(session_id)

    def _forget(self, session: RuntimeSession) -> None:
        self._sessions.pop(session.id, None)

    def _plan(self, session: RuntimeSession) -> Projection:
        registered = tuple(session._tools)
        inputs = PlanInputs(
            config=self.config,
            config_revision=self.config_revision,
            model=session.model,
            kind=session.kind,
            ui_available=session.ui.available,
            allowlist=self.allowlist,
            registered=registered,
            session_id=session.id,
        )
        projection = self._planner(inputs)
        # Foreign registrations (embedders, tests) are visible unless the allowlist drops them.
        extra = tuple(
            t.spec.name
            for t in self._extra_tools
            if t.spec.name not in projection.visible
            and (self.allowlist is None or t.spec.name in self.allowlist)
        )
        if extra:
            projection = Projection(
                visible=projection.visible + extra,
                nested_only=projection.nested_only,
                inactive={k: v for k, v in projection.inactive.items() if k not in extra},
                diagnostics=projection.diagnostics,
            )
        return projection


def _model_text(model: ModelRef | None) -> str | None:
    return str(model) if model is not None else None


Listener = Callable[["RuntimeSession"], None]


class RuntimeSession:
    """One agent conversation: its model, projection, tool instances and running work."""

    def __init__(
        self,
        runtime: Runtime,
        *,
        session_id: str,
        kind: SessionKind,
        model: ModelRef | None,
        cwd: Path,
        ui: UIPort | None,
    ) -> None:
        self.runtime = runtime
        self.id = session_id
        self.kind: SessionKind = kind
        self.model = model
        self.cwd = cwd
        self._fallback_ui = ui
        self.ui = RoutedUI(lambda: runtime.console_ui, ui)
        self.projection = Projection()
        self.closed = False
        self._listeners: list[Listener] = []
        self._sequential = asyncio.Lock()
        self._sync_lock = asyncio.Lock()
        self._background: set[asyncio.Task[Any]] = set()
        self._calls: set[asyncio.Task[Any]] = set()
        self.services = SessionServices(
            session_id=session_id,
            cwd=cwd,
            ui=self.ui,
            nested=self._nested_dispatch,
            agent_dir=runtime.agent_dir,
        )
        self._tools: dict[str, Tool] = {}
        for binding in runtime._bindings:
            try:
                built = binding.build(self.services)
            except Exception:
                _log.exception(
                    "capability %s failed to build; it stays unavailable", binding.capability
                )
                continue
            for tool in built:
                self._tools.setdefault(tool.spec.name, tool)
        for tool in runtime._extra_tools:
            self._tools[tool.spec.name] = tool  # a foreign registration wins its name

    def set_fallback_ui(self, ui: UIPort | None) -> None:
        """Replace the session's own UI port (e.g. once an MCP client declared elicitation)."""
        self._fallback_ui = ui
        self.ui = RoutedUI(lambda: self.runtime.console_ui, ui)
        self.services.ui = self.ui

    # ----------------------------------------------------------------- projection
    def subscribe(self, listener: Listener) -> Callable[[], None]:
        """Call `listener(session)` whenever the visible surface changes."""
        self._listeners.append(listener)

        def unsubscribe() -> None:
            if listener in self._listeners:
                self._listeners.remove(listener)

        return unsubscribe

    async def sync(self, *, initial: bool = False) -> bool:
        """Recompute the projection; notify listeners when the surface changed."""
        if self.closed:
            return False
        async with self._sync_lock:
            new = self.runtime._plan(self)
            changed = not new.same_surface(self.projection)
            self.projection = new
        if new.diagnostics is not None:
            self.runtime.events.publish(EXECUTION_DIAGNOSTICS_CHANNEL, dict(new.diagnostics))
        if changed and not initial:
            self.runtime.events.publish(
                RUNTIME_EVENTS_CHANNEL,
                {"type": "projection-changed", "session": self.id, "visible": list(new.visible)},
            )
            for listener in list(self._listeners):
                try:
                    listener(self)
                except Exception:
                    _log.exception("projection listener failed")
        return changed

    async def set_model(self, model: ModelRef | str | None) -> bool:
        """Switch the session's model, keeping its running work; True if the surface changed."""
        self.model = parse_model(model) if isinstance(model, str) else model
        self.runtime.events.publish(
            RUNTIME_EVENTS_CHANNEL,
            {"type": "model-changed", "session": self.id, "model": _model_text(self.model)},
        )
        return await self.sync()

    def tool_specs(self) -> list[ToolSpec]:
        """Specs of the visible tools, in projection order."""
        return [self._tools[name].spec for name in self.projection.visible if name in self._tools]

    def known(self, name: str) -> bool:
        return name in self._tools or name in INACTIVE_MESSAGES or name in self.projection.inactive

    # ----------------------------------------------------------------- calls
    async def call(
        self,
        name: str,
        args: Mapping[str, Any] | None,
        *,
        tool_call_id: str = "",
        progress: ProgressSink | None = None,
        ui: UIPort | None = None,
        path: Literal["direct", "nested"] = "direct",
        cell_id: str | None = None,
    ) -> ToolResult:
        """Run one tool call. Raises `ToolError` with the exact model-facing text on failure."""
        self._admit(name, path)
        tool = self._tools[name]
        env: Mapping[str, str] | None = None
        if (
            name in _HOOKED_TOOLS
            and self.runtime.hooks is not None
            and not self.runtime.hooks.empty
        ):
            record: InvocationCall = {
                "tool": name,  # type: ignore[typeddict-item]  # narrowed by _HOOKED_TOOLS
                "path": path,
                "cwd": str(self._call_cwd(name, args)),
            }
            if cell_id is not None:
                record["cellId"] = cell_id
            record["sessionId"] = self.id
            invocation = await resolve_invocation(self.runtime.hooks, record)
            if invocation.awaited:
                self._admit(name, path)  # the capability may have gone away while the hook ran
            env = invocation.env
        call_ui: UIPort = self.ui if ui is None else RoutedUI(lambda: self.runtime.console_ui, ui)
        ctx = CallContext(
            cwd=self.cwd,
            path=path,
            session_id=self.id,
            tool_call_id=tool_call_id or f"call-{uuid.uuid4().hex[:12]}",
            ui=call_ui,
            env_overlay=env,
            progress=progress,
            cell_id=cell_id,
        )
        task = asyncio.current_task()
        if task is not None:
            self._calls.add(task)
        self.runtime.events.publish(
            RUNTIME_EVENTS_CHANNEL,
            {
                "type": "call-started",
                "session": self.id,
                "tool": name,
                "path": path,
                "call": ctx.tool_call_id,
            },
        )
        outcome = "error"
        try:
            if tool.spec.sequential:
                async with self._sequential:
                    result = await tool(dict(args or {}), ctx)
            else:
                result = await tool(dict(args or {}), ctx)
            outcome = "ok"
            return result
        except asyncio.CancelledError:
            outcome = "cancelled"
            raise
        finally:
            if task is not None:
                self._calls.discard(task)
            self.runtime.events.publish(
                RUNTIME_EVENTS_CHANNEL,
                {
                    "type": "call-finished",
                    "session": self.id,
                    "tool": name,
                    "call": ctx.tool_call_id,
                    "outcome": outcome,
                },
            )

    def _admit(self, name: str, path: Literal["direct", "nested"]) -> None:
        if self.closed:
            raise ToolError(
                "session-closed", "This pct session has ended; reconnect to start a new one."
            )
        if name not in self._tools and not self.known(name):
            raise ToolError(
                "unknown-tool",
                f"Unknown tool: {name}. Call one of the tools this server lists (tools/list).",
            )
        if name in self._tools and self.projection.admits(name, path):
            return
        refusal = self.projection.refusal(name) or INACTIVE_MESSAGES.get(name)
        raise ToolError("not-enabled", refusal or f"{name} is not available in this session.")

    def _call_cwd(self, name: str, args: Mapping[str, Any] | None) -> Path:
        if name == "exec_command" and args:
            raw = args.get("workdir", args.get("cwd"))
            if isinstance(raw, str) and raw:
                return (self.cwd / os.path.expanduser(raw)).resolve()
        return self.cwd

    async def _nested_dispatch(
        self,
        name: str,
        args: Mapping[str, Any],
        *,
        cell_id: str,
        progress: ProgressSink | None = None,
        tool_call_id: str = "",
    ) -> ToolResult:
        """How Code Mode cells reach `apply_patch` and the shell pair: same gates, path nested."""
        return await self.call(
            name, args, path="nested", cell_id=cell_id, progress=progress, tool_call_id=tool_call_id
        )

    # ----------------------------------------------------------------- end
    async def close(self) -> None:
        """End the session: cancel its calls, clean up shell jobs, code cells, recovery files."""
        if self.closed:
            return
        self.closed = True
        self.runtime._forget(self)
        current = asyncio.current_task()
        pending = [t for t in self._calls | self._background if t is not current and not t.done()]
        for task in pending:
            task.cancel()
        if pending:
            await asyncio.gather(*pending, return_exceptions=True)
        errors = await self.services.aclose()
        self._listeners.clear()
        self.runtime.events.publish(
            RUNTIME_EVENTS_CHANNEL,
            {"type": "session-closed", "session": self.id, "cleanupErrors": len(errors)},
        )
