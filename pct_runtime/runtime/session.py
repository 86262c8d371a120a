"""`RuntimeSession`: one agent conversation — its model, projection, tools and running work.

A sync plans the projection with the decision layer (`plan_projection`), applies it —
start fence, then owned-resource cleanups (`runtime.descriptors`) — and commits it through the
runtime's `ProjectionSync` (newest sync wins; diagnostics are published on commit). A
failed cleanup rejects the sync: the previous projection stays, status shows `Apply
error:`, and the next reload or model change retries. A call is admitted against the
committed projection and the start fence and runs through the call pipeline
(`runtime.calls`, the same one Code Mode's nested calls take) with a `CallContext` whose UI
routes console → the session's own port → none.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import uuid
from collections.abc import Callable
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Literal, cast

import pct_runtime.runtime.descriptors as payload_hooks
from pct_runtime.capabilities.base import (
    Approval,
    CallContext,
    CallObservation,
    Prepared,
    ProgressSink,
    Tool,
    ToolError,
    ToolResult,
    ToolSpec,
    as_tool,
)
from pct_runtime.capabilities.context import Slots
from pct_runtime.capabilities.table import CAPABILITIES
from pct_runtime.decide.projection import ProjectionPlan, plan_projection
from pct_runtime.host.pi.model_registry import Model
from pct_runtime.host.pi.names import OWNED_TOOL_NAMES
from pct_runtime.host.pi.session import HostSession, SessionKind
from pct_runtime.host.system.workspace_lock import locks_dir
from pct_runtime.host.ui import Answering, UIPort
from pct_runtime.journal.recorder import CallOrigin, CallTrace
from pct_runtime.jsontypes import JSONMapping
from pct_runtime.runtime.calls import CallPipeline
from pct_runtime.runtime.context import SessionContext
from pct_runtime.runtime.contracts import RuntimeHost
from pct_runtime.runtime.descriptors import MAX_APPLY_PASSES, apply_cleanups, transition_of
from pct_runtime.runtime.projection import INACTIVE_MESSAGES, Projection, refusal_for
from pct_runtime.runtime.ui import RoutedUI
from pct_runtime.status import commands_lines, sandbox_lines
from pct_runtime.status import status_text as render_status

if TYPE_CHECKING:  # the embedder's typed compaction API; the OpenAI seam's hook builds them
    from pct_runtime.capabilities.openai.factory import CompactionPreparation, CompactionResult

_log = logging.getLogger(__name__)

#: Channel of runtime state events: dicts with a `type` key (`session-opened`,
#: `session-client`, `session-closed`, `projection-changed`, `model-changed`, `reloaded`,
#: `call-started`, `call-finished`). Never carries command, patch or program text.
RUNTIME_EVENTS_CHANNEL = "pct.runtime"

Listener = Callable[["RuntimeSession"], None]


class RuntimeSession:
    """One agent conversation. Open it with `Runtime.open_session`, end it with `close()`."""

    def __init__(
        self,
        runtime: RuntimeHost,
        *,
        session_id: str | None,
        kind: SessionKind,
        model: Model | None,
        cwd: Path,
        ui: UIPort | None,
    ) -> None:
        self.runtime = runtime
        self.id = session_id or f"pct-session-{uuid.uuid4().hex[:12]}"
        self.kind: SessionKind = kind
        self.cwd = cwd
        self.ui = RoutedUI(lambda: runtime.console_ui, ui, session_id=self.id)
        self.host = HostSession(kind=kind, model=model, ui_available=self.ui.available, id=self.id)
        self.projection = Projection()
        #: Owned names whose new starts the latest candidate refuses (the start fence).
        self.denied_starts: frozenset[str] = frozenset()
        self.closed = False
        self._listeners: list[Listener] = []
        self._sequential = asyncio.Lock()
        self._sync_lock = asyncio.Lock()
        self._background: set[asyncio.Task[object]] = set()
        self._calls: set[asyncio.Task[object]] = set()
        #: Where the workspace locks a patch commits under live (`CallContext.patch_locks`).
        self.patch_locks = locks_dir(runtime.agent_dir)
        self._tools: dict[str, Tool] = {}
        #: The Toolkit's own tools, which a Code Mode cell reaches (a foreign tool that
        #: wins a direct name is never reached from a cell).
        self._own_tools: dict[str, Tool] = {}
        self.pipeline = CallPipeline(self._tools, hooks=runtime.hooks, nested=self._own_tools)
        self.slots = Slots(
            on_built=lambda key: runtime.events.publish(
                RUNTIME_EVENTS_CHANNEL, {"type": "service-built", "session": self.id, "key": key}
            )
        )
        #: What the session's capabilities see of it (their bindings are built from it).
        self.context = SessionContext(self, runtime, self.pipeline, self.slots)
        self._foreign = frozenset(tool.spec.name for tool in runtime.extra_tools)
        for binding in runtime.bindings:
            try:
                built = binding.build(self.context)
            except Exception:
                _log.exception("capability %s failed to build; it stays off", binding.capability)
                continue
            for tool in built:
                self._own_tools.setdefault(tool.spec.name, as_tool(tool))
        self._tools.update(self._own_tools)
        for tool in runtime.extra_tools:
            self._tools[tool.spec.name] = as_tool(tool)  # a foreign registration wins its name

    @property
    def model(self) -> Model | None:
        return self.host.model

    @property
    def plan(self) -> ProjectionPlan | None:
        """The committed projection plan (decisions, routes, names), None before a sync."""
        committed: ProjectionPlan | None = self.runtime.projection_sync.committed(self.id)
        return committed

    def set_fallback_ui(self, ui: UIPort | None) -> None:
        """Replace the session's own UI port (e.g. once an MCP client declared elicitation)."""
        self.ui = RoutedUI(lambda: self.runtime.console_ui, ui, session_id=self.id)
        # Viewers learn the client's name and version from the port (stdio: first request).
        self.runtime.events.publish(
            RUNTIME_EVENTS_CHANNEL,
            {"type": "session-client", "session": self.id, "client": self.ui.client},
        )

    # ----------------------------------------------------------------- projection
    def subscribe(self, listener: Listener) -> Callable[[], None]:
        """Call `listener(session)` whenever the visible surface changes."""
        self._listeners.append(listener)

        def unsubscribe() -> None:
            if listener in self._listeners:
                self._listeners.remove(listener)

        return unsubscribe

    def sync_soon(self) -> None:
        """Schedule a sync from synchronous code (a UI attach, a console toggle)."""
        task = asyncio.get_running_loop().create_task(self.sync())
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    async def sync(self, *, initial: bool = False) -> bool:
        """Plan, apply and commit the projection; notify listeners when the surface changed.

        Returns False when nothing new was committed: the sync was superseded by a newer
        one (it publishes nothing), or a cleanup failed (the previous projection stays in
        force and `status_text` shows the `Apply error:` line until a later sync succeeds).
        """
        if self.closed:
            return False
        runtime = self.runtime
        sync = runtime.projection_sync
        ticket = sync.begin(self.id)  # newest first: a queued older sync is superseded now

        def cleanup_pending(flag: bool) -> None:
            sync.set_cleanup_pending(self.id, flag)

        async with self._sync_lock:
            if self.closed or not sync.is_current(ticket):
                return False
            self.host.ui_available = self.ui.available
            plan = self.plan_now()
            for attempt in range(MAX_APPLY_PASSES):
                transition = transition_of(plan, runtime.config)
                self.denied_starts = transition.denied_starts  # before any await
                failures = await apply_cleanups(transition, self.slots, pending=cleanup_pending)
                if failures:
                    sync.reject(ticket)
                    return False
                if self.closed or not sync.is_current(ticket):
                    return False
                # Re-plan on fresh state: the cleanups awaited, the host may have moved.
                fresh = self.plan_now()
                if transition_of(fresh, runtime.config) == transition:
                    plan = fresh
                    break
                if attempt + 1 == MAX_APPLY_PASSES:
                    break  # commit what was applied; the next trigger catches up
                plan = fresh
            if not sync.commit(ticket, plan, config_revision=runtime.config_revision):
                return False
            self.host.active_tools = list(plan.active)
            # Disabling discovery forgets this session's loads (re-enabling hides again).
            self.host.discovered.intersection_update(plan.discovered)
            new = self._projection_of(plan)
            changed = not new.same_surface(self.projection)
            self.projection = new
        if changed and not initial:
            runtime.events.publish(
                RUNTIME_EVENTS_CHANNEL,
                {"type": "projection-changed", "session": self.id, "visible": list(new.visible)},
            )
            for listener in list(self._listeners):
                try:
                    listener(self)
                except Exception:
                    _log.exception("projection listener failed")
        return changed

    def plan_now(self) -> ProjectionPlan:
        """Plan this session's projection from the current state, without committing it.

        `sync` commits exactly this; `find_tools` reads it to recheck eligibility per call.
        """
        previous = self.plan
        return plan_projection(
            self.runtime.plan_inputs(
                model=self.host.model,
                kind=self.kind,
                ui_available=self.ui.available,
                active=tuple(self.host.active_tools) if previous else None,
                discovered=frozenset(self.host.discovered),
                native_suppressed=previous.native_suppressed if previous else frozenset(),
            ),
            CAPABILITIES,
        )

    def _projection_of(self, plan: ProjectionPlan) -> Projection:
        visible = tuple(name for name in plan.active if name in self._tools)
        nested = tuple(name for name in plan.nested_only if name in self._tools)
        known = (*OWNED_TOOL_NAMES, *self._tools)
        inactive = {
            name: refusal_for(name, plan)
            for name in known
            if name not in visible and name not in nested
        }
        return Projection(visible=visible, nested_only=nested, inactive=inactive, plan=plan)

    async def set_model(self, model: str | Model | None) -> bool:
        """Switch the model, keeping the session's running work; True if the surface changed."""
        resolved = self.runtime.resolve_model(model) if isinstance(model, str) else model
        self.host.model = resolved
        self.runtime.events.publish(
            RUNTIME_EVENTS_CHANNEL,
            {
                "type": "model-changed",
                "session": self.id,
                "model": resolved.key if resolved else None,
            },
        )
        return await self.sync()

    def status_text(self) -> str:
        """The `/pct status` text of this session (from its committed plan)."""
        plan = self.plan
        if plan is None:
            return "Pi Codex Toolkit\n(no projection committed yet)"
        return render_status(
            plan,
            config_path=os.fspath(self.runtime.config_path),
            read_error=self.runtime.config_error,
            apply_error=self.runtime.projection_sync.apply_error(self.id),
            sandbox=[
                *sandbox_lines(self.runtime.sandbox, self.cwd),
                *commands_lines(self.runtime.commands),
            ],
        )

    # ----------------------------------------------------------------- payload hooks
    async def before_provider_request(
        self, payload: object, *, newest_compaction_details: object = None
    ) -> object:
        """Embedded sessions: the provider request with checkpoint replay and native search
        applied as the decisions say; `mcp` sessions get `payload` back unchanged."""
        return await payload_hooks.before_provider_request(
            self, payload, newest_compaction_details=newest_compaction_details
        )

    async def before_compact(self, preparation: CompactionPreparation) -> CompactionResult | None:
        """Embedded sessions: a remote `CompactionResult`, or None to compact natively."""
        result = await payload_hooks.before_compact(self, preparation)
        return cast("CompactionResult | None", result)  # the OpenAI seam's hook returns one

    def tool_specs(self) -> list[ToolSpec]:
        """Specs of the visible tools, in projection order."""
        return [self._tools[name].spec for name in self.projection.visible]

    @property
    def discovered(self) -> set[str]:
        """Deferred names `find_tools` loaded in this session (never persisted)."""
        return self.host.discovered

    def admitted(self) -> tuple[str, ...]:
        """The names admitted right now (visible plus nested-only)."""
        return (*self.projection.visible, *self.projection.nested_only)

    def describe(self, name: str) -> str | None:
        """The description of one of the session's own tools; None without such a tool."""
        tool = self._tools.get(name)
        return tool.spec.description if tool is not None else None

    def known(self, name: str) -> bool:
        return name in self._tools or name in self.projection.inactive

    # ----------------------------------------------------------------- calls
    async def call(
        self,
        name: str,
        args: JSONMapping | None,
        *,
        tool_call_id: str = "",
        progress: ProgressSink | None = None,
        ui: UIPort | None = None,
        path: Literal["direct", "nested"] = "direct",
        cell_id: str | None = None,
        origin: CallOrigin | None = None,
    ) -> ToolResult:
        """Run one tool call. Raises `ToolError` with the exact model-facing text on failure.

        `ui` is this call's own fallback port (an MCP request's elicitation channel); the
        console still answers first when one is attached. `origin` (transport, MCP client)
        goes into the journal; without it the call counts as the console's or embedder's.
        Every call, refused ones included, is journaled (by the pipeline).
        """
        gate = _DirectGate(self, path, origin, ui, progress, cell_id, tool_call_id)
        return await self.pipeline.call(name, args or {}, gate)

    def record_action(
        self,
        action: str,
        summary: str,
        *,
        outcome: str = "ok",
        error_code: str | None = None,
        result: str = "",
        origin: CallOrigin | None = None,
    ) -> None:
        """Journal what a person did to this session from the console (`stop`,
        `end_session`): one row with transport `console` (`origin` names a live console
        acting from another process). Never blocks or raises."""
        trace = self.runtime.journal.trace(
            tool=action,
            args=None,
            session_id=self.id,
            origin=origin or CallOrigin("console"),
            model=self.host.model.key if self.host.model else None,
            path="direct",
            summary=summary,
        )
        if trace is not None:
            trace.finish(outcome=outcome, error_code=error_code, text=result)

    @property
    def _default_origin(self) -> CallOrigin:
        return CallOrigin("embedded" if self.kind == "embedded" else "console")

    def _admit(self, name: str, path: Literal["direct", "nested"]) -> None:
        if self.closed:
            raise ToolError(
                "session-closed", "This pct session has ended; reconnect to start a new one."
            )
        if not self.known(name):
            raise ToolError(
                "unknown-tool",
                f"Unknown tool: {name}. Call one of the tools this server lists (tools/list).",
            )
        if name in self.denied_starts and name not in self._foreign:
            # The start fence: the route is going away (or its cleanup is pending); work
            # already running stays reachable through write_stdin / wait.
            raise ToolError("not-enabled", INACTIVE_MESSAGES[name])
        if name in self._tools and self.projection.admits(name, path):
            return
        refusal = self.projection.refusal(name) or f"{name} is not available in this session."
        raise ToolError("not-enabled", refusal)

    # ----------------------------------------------------------------- end
    async def close(self) -> None:
        """End the session: cancel its calls; clean up shell jobs, code cells, recovery files."""
        if self.closed:
            return
        self.closed = True
        self.runtime.forget_session(self.id)
        current = asyncio.current_task()
        pending = [t for t in self._calls | self._background if t is not current and not t.done()]
        for task in pending:
            task.cancel()
        if pending:
            await asyncio.gather(*pending, return_exceptions=True)
        errors = await self.context.aclose()
        self._listeners.clear()
        self.runtime.events.publish(
            RUNTIME_EVENTS_CHANNEL,
            {"type": "session-closed", "session": self.id, "cleanupErrors": len(errors)},
        )


@dataclass
class _DirectGate:
    """A call the session's client (or the console, or an embedder) makes: the session's
    journal row, admission, call context, runtime events and sequential lock."""

    session: RuntimeSession
    path: Literal["direct", "nested"]
    origin: CallOrigin | None
    ui: UIPort | None
    progress: ProgressSink | None
    cell_id: str | None
    tool_call_id: str

    def trace(self, name: str, args: JSONMapping) -> CallObservation | None:
        session = self.session
        return session.runtime.journal.trace(
            tool=name,
            args=args,
            session_id=session.id,
            origin=self.origin or session._default_origin,
            model=session.host.model.key if session.host.model else None,
            path=self.path,
        )

    def context(self, trace: CallObservation | None) -> CallContext:
        session = self.session
        call_ui: UIPort = (
            session.ui
            if self.ui is None
            else RoutedUI(lambda: session.runtime.console_ui, self.ui, session_id=session.id)
        )
        return CallContext(
            cwd=session.cwd,
            path=self.path,
            session_id=session.id,
            tool_call_id=self.tool_call_id or f"call-{uuid.uuid4().hex[:12]}",
            ui=call_ui,
            progress=self.progress,
            cell_id=self.cell_id,
            patch_witness=trace.patch_witness if trace is not None else None,
            patch_locks=session.patch_locks,
            observer=trace.nested() if isinstance(trace, CallTrace) else None,
        )

    def admit(self, name: str) -> None:
        self.session._admit(name, self.path)

    def recheck(self, name: str) -> None:
        self.session._admit(name, self.path)

    def running(self, name: str, ctx: CallContext) -> _Running:
        return _Running(self.session, self.path, name, ctx.tool_call_id)

    def hold(self, tool: Tool, prepared: Prepared) -> AbstractAsyncContextManager[object]:
        """A sequential tool waits for the session's other sequential calls."""
        return self.session._sequential if tool.spec.sequential else _NO_HOLD

    def asks(self, name: str, approval: Approval) -> bool:
        return True  # whatever a tool's prepare says must be approved is asked

    def asking(self, name: str, note: Answering) -> contextlib.nullcontext[None]:
        return contextlib.nullcontext()

    def unavailable(self, name: str) -> str:
        return (
            f"{name} needs the user's approval, but no interactive UI can ask in this "
            "session. Nothing ran."
        )

    def denied(self, name: str, note: Answering) -> str:
        return f"{name} was not approved. Nothing ran; do not retry it without asking the user."

    def executing(self) -> None:
        return None

    def settled(self) -> None:
        return None


_NO_HOLD: AbstractAsyncContextManager[object] = contextlib.nullcontext()


class _Running:
    """A direct call's task is the session's until it ends (close cancels it), and viewers
    see it start and finish (`call-started`, `call-finished`)."""

    def __init__(self, session: RuntimeSession, path: str, name: str, call_id: str) -> None:
        self._session = session
        self._path = path
        self._name = name
        self._call_id = call_id
        self._task: asyncio.Task[object] | None = None

    def __enter__(self) -> None:
        session = self._session
        self._task = task = asyncio.current_task()
        if task is not None:
            session._calls.add(task)
        session.runtime.events.publish(
            RUNTIME_EVENTS_CHANNEL,
            {
                "type": "call-started",
                "session": session.id,
                "tool": self._name,
                "path": self._path,
                "call": self._call_id,
            },
        )

    def __exit__(self, kind: type[BaseException] | None, *rest: object) -> None:
        session = self._session
        if self._task is not None:
            session._calls.discard(self._task)
        if kind is None:
            outcome = "ok"
        elif issubclass(kind, asyncio.CancelledError):
            outcome = "cancelled"
        else:
            outcome = "error"
        session.runtime.events.publish(
            RUNTIME_EVENTS_CHANNEL,
            {
                "type": "call-finished",
                "session": session.id,
                "tool": self._name,
                "call": self._call_id,
                "outcome": outcome,
            },
        )
