"""The runtime side of live control: what connected consoles see, and what they may do.

One `LiveHub` per runtime process. It watches the runtime (its event bus, every session's
shell and Code Mode managers), keeps the list of work a snapshot reports, owns the output
logs followed works are read from, routes approvals to consoles (`RemoteApprovals`), and
carries out acts (stop a job or cell, end a session) for `console` connections; a
`monitor` connection's acts are refused. The control server hands it every `subscribe`
connection (`serve_stream`).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import time
from collections.abc import Callable, Mapping

from pct_runtime.host.events import (
    EXECUTION_DIAGNOSTICS_CHANNEL,
    diagnostics_text,
    runtime_event_text,
)
from pct_runtime.journal.recorder import CallOrigin
from pct_runtime.jsontypes import JSONObject
from pct_runtime.runtime import RUNTIME_EVENTS_CHANNEL, Runtime, RuntimeSession
from pct_runtime.runtime.context import built_code, built_shell
from pct_runtime.serve.live.connection import FLUSH_INTERVAL, LiveConnection
from pct_runtime.serve.live.protocol import (
    ANSWER,
    END_SESSION,
    MAX_TYPED_BYTES,
    PROTOCOL_VERSION,
    READ_ONLY_MESSAGE,
    ROLES,
    STOP,
    TYPE_INPUT,
    ActionResult,
    ApprovalClosed,
    ApprovalInfo,
    EventInfo,
    Role,
    RuntimeInfo,
    SessionInfo,
    Snapshot,
    approval_message,
    closed_message,
    encode_line,
    event_message,
    runtime_to_json,
    snapshot_message,
    speaks,
    version_refusal,
)
from pct_runtime.serve.live.remote_approvals import RemoteApprovals
from pct_runtime.serve.live.worklog import CellView, ShellJob, TrackedWork, WorkLog

_log = logging.getLogger(__name__)

#: Characters of a console's self-reported `client` kept (it goes into every event).
MAX_CLIENT_CHARS = 200
#: Work rows a snapshot keeps (finished ones leave first).
MAX_WORK = 200
#: Events that change what a snapshot shows.
_SNAPSHOT_EVENTS = frozenset(
    {
        "session-opened",
        "session-client",
        "session-closed",
        "projection-changed",
        "model-changed",
        "reloaded",
    }
)


class LiveHub:
    def __init__(
        self, runtime: Runtime, *, kind: str, transport: str, mcp: str, label: str
    ) -> None:
        self.runtime = runtime
        self.kind = kind
        self.transport = transport
        self.mcp = mcp
        self.label = label
        self.control = ""
        self.started = time.time()
        self.connections: set[LiveConnection] = set()
        self.work: dict[str, TrackedWork] = {}
        self.approvals = RemoteApprovals(self)
        self._watched: dict[str, dict[str, object]] = {}
        self._unsubscribe: list[Callable[[], None]] = []
        self._detach_ui: Callable[[], None] | None = None
        self._tasks: set[asyncio.Task[None]] = set()
        self._closed = False
        self._generation = 0
        self._cached: tuple[int, float, bytes] | None = None
        self._flush_at: asyncio.TimerHandle | None = None
        #: How long the last snapshot took to build (snapshots are spaced by it).
        self.build_seconds = 0.0

    # -- lifecycle ------------------------------------------------------------------------
    def start(self) -> None:
        bus = self.runtime.events
        self._unsubscribe += [
            bus.subscribe(RUNTIME_EVENTS_CHANNEL, self._on_runtime_event),
            bus.subscribe(EXECUTION_DIAGNOSTICS_CHANNEL, self._on_diagnostics),
        ]
        for session in self.runtime.sessions:
            self._watch(session)

    async def aclose(self) -> None:
        self._closed = True
        if self._flush_at is not None:
            self._flush_at.cancel()
            self._flush_at = None
        self.approvals.cancel_all()
        if self._detach_ui is not None:
            self._detach_ui()
            self._detach_ui = None
        for unsubscribe in self._unsubscribe:
            unsubscribe()
        self._unsubscribe.clear()
        for connection in list(self.connections):
            connection.closed = True
            connection.close_transport()
        for work in self.work.values():
            work.forget()
        for task in list(self._tasks):
            task.cancel()
        if self._tasks:
            await asyncio.gather(*self._tasks, return_exceptions=True)

    def keep(self, task: asyncio.Task[None]) -> None:
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    # -- what a snapshot shows ------------------------------------------------------------
    def runtime_info(self) -> RuntimeInfo:
        return RuntimeInfo(
            pid=os.getpid(),
            kind=self.kind,
            transport=self.transport,
            mcp=self.mcp,
            control=self.control,
            started=self.started,
        )

    def snapshot(self) -> Snapshot:
        sessions = tuple(
            SessionInfo(
                id=s.id,
                kind=s.kind,
                client_name=s.ui.client,
                client_version=s.ui.client_version,
                model=s.model.key if s.model is not None else None,
            )
            for s in self.runtime.sessions
        )
        return Snapshot(
            runtime=self.runtime_info(),
            sessions=sessions,
            work=tuple(w.info() for w in self.work.values()),
            status_text=self.runtime.live_status_text(self.label),
        )

    def client_label(self, session_id: str | None) -> str | None:
        session = self.runtime.session(session_id) if session_id else None
        if session is None or session.ui.client is None:
            return None
        version = session.ui.client_version
        return f"{session.ui.client} {version}" if version else session.ui.client

    @property
    def approvers(self) -> int:
        return sum(1 for c in self.connections if c.approver)

    # -- fan-out --------------------------------------------------------------------------
    # Everything broadcast is encoded once and the bytes shared; connections are written
    # by one flush per `FLUSH_INTERVAL` (not per event), so consoles cost calls next to
    # nothing however many are connected.
    @property
    def generation(self) -> int:
        """Bumped on every change a snapshot shows; a connection behind it gets one."""
        return self._generation

    def changed(self) -> None:
        self._generation += 1
        self.soon()

    def soon(self) -> None:
        """Flush every connection within one interval (one timer for all of them)."""
        if self._flush_at is None and not self._closed and self.connections:
            delay = max(FLUSH_INTERVAL, self._snapshot_wait())
            self._flush_at = asyncio.get_running_loop().call_later(delay, self._flush)

    def _snapshot_wait(self) -> float:
        """Seconds until the next snapshot may be built: at most ~10% of the loop goes to
        snapshots, however large the runtime grows."""
        cached = self._cached
        if cached is None or cached[0] == self._generation:
            return 0.0
        interval = max(FLUSH_INTERVAL, 10 * self.build_seconds)
        return cached[1] + interval - time.monotonic()

    def _flush(self) -> None:
        self._flush_at = None
        for connection in list(self.connections):
            connection.flush()
        cached = self._cached
        if cached is not None and cached[0] != self._generation:
            self.soon()  # a change came too soon after the last build: send it later

    def snapshot_line(self) -> tuple[int, bytes]:
        """`(generation, line)` of the current snapshot: rebuilt when something changed
        and the last build is old enough, else the cached one (a connection still behind
        gets the fresh one with a later flush)."""
        cached = self._cached
        if cached is None or (cached[0] != self._generation and self._snapshot_wait() <= 0):
            now = time.monotonic()
            generation = self._generation
            line = encode_line(snapshot_message(self.snapshot()))
            self.build_seconds = time.monotonic() - now
            cached = self._cached = (generation, now, line)
        return cached[0], cached[2]

    def note(self, kind: str, text: str) -> None:
        line = encode_line(event_message(EventInfo(time.time(), kind, text)))
        for connection in self.connections:
            connection.push_event(line)
        self.soon()

    def broadcast_approval(self, info: ApprovalInfo) -> None:
        line = encode_line(approval_message(info))
        for connection in self.connections:
            connection.push_control(line)

    def broadcast_closed(self, closed: ApprovalClosed) -> None:
        line = encode_line(closed_message(closed))
        for connection in self.connections:
            connection.push_control(line)

    def _on_runtime_event(self, payload: object) -> None:
        if not isinstance(payload, dict):
            return
        kind = str(payload.get("type", "event"))
        if self.connections:  # nobody watching: no text to build
            self.note("runtime", runtime_event_text(payload))
        session_id = str(payload.get("session"))
        if kind in ("session-opened", "service-built"):
            session = self.runtime.session(session_id)
            if session is not None:
                self._watch(session)
        if kind == "session-closed":
            self._watched.pop(session_id, None)
            for work_id, work in list(self.work.items()):
                if work.session_id == session_id:
                    work.forget()
                    del self.work[work_id]
        if kind in _SNAPSHOT_EVENTS:
            self.changed()

    def _on_diagnostics(self, payload: object) -> None:
        if not isinstance(payload, dict) or not self.connections:
            return
        self.note("diagnostics", diagnostics_text(payload))
        self.changed()

    # -- work -----------------------------------------------------------------------------
    def _watch(self, session: RuntimeSession) -> None:
        """Subscribe to the session's shell and code managers, once per manager object."""
        watched = self._watched.setdefault(session.id, {})
        sid = session.id
        shell = built_shell(session.context)
        if shell is not None and watched.get("shell") is not shell:
            watched["shell"] = shell
            self._unsubscribe.append(shell.subscribe(lambda job: self._add_job(sid, job)))
            for job in shell.jobs():
                self._add_job(sid, job)
        code = built_code(session.context)
        if code is not None and watched.get("code") is not code:
            watched["code"] = code
            self._unsubscribe.append(code.subscribe(lambda cell: self._add_cell(sid, cell)))
            for cell in code.cells():
                self._add_cell(sid, cell)

    def _add_job(self, session_id: str, job: ShellJob) -> None:
        self._add(TrackedWork(session_id, "shell", job=job))

    def _add_cell(self, session_id: str, cell: CellView) -> None:
        self._add(TrackedWork(session_id, "cell", cell=cell))

    def _add(self, work: TrackedWork) -> None:
        if work.id in self.work:
            return
        self.work[work.id] = work
        excess = len(self.work) - MAX_WORK
        if excess > 0:
            # Oldest first, and the oldest have nearly always ended: stop at the first few
            # rather than reading every entry's state on every new job.
            ended: list[str] = []
            for w in self.work.values():
                if not w.running and w.log is None:
                    ended.append(w.id)
                    if len(ended) == excess:
                        break
            for old_id in ended:
                del self.work[old_id]
        self.changed()

        async def wait_end() -> None:
            await work.finished.wait()
            self.changed()

        task = asyncio.get_running_loop().create_task(wait_end())
        self.keep(task)
        work._removers.append(lambda: _cancel(task))

    def log_for(self, work_id: str) -> WorkLog | None:
        work = self.work.get(work_id)
        if work is None:
            return None
        if work.log is None:
            work.log = WorkLog(work)
            if work._gone:
                work.log.end()
        return work.log

    def release_log(self, log: WorkLog) -> None:
        """A follower left; the last one out drops the log (its text stays in the captures)."""
        if log.followers or log.work.log is not log:
            return
        log.work.log = None
        log.close()

    # -- connections ----------------------------------------------------------------------
    async def serve_stream(
        self,
        request: Mapping[str, object],
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
    ) -> None:
        """A token-checked `subscribe`: refuse it with one line, or serve the stream."""
        version = request.get("version")
        role = request.get("role", "monitor")  # least privilege when unsaid
        problem: str | None = None
        if not speaks(version):
            problem = version_refusal(version)
        elif role not in ROLES:
            problem = f"unknown role {role!r}; expected console or monitor"
        elif self._closed:
            problem = "this runtime is shutting down"
        if problem is not None:
            await _write_line(writer, {"ok": False, "error": problem})
            return
        checked: Role = "monitor" if role == "monitor" else "console"
        client = bounded_client(request.get("client", ""))
        connection = LiveConnection(self, checked, client, reader, writer)
        runtime = runtime_to_json(self.runtime_info())
        await _write_line(writer, {"ok": True, "version": PROTOCOL_VERSION, "runtime": runtime})
        self.connections.add(connection)
        for info in self.approvals.pending:
            connection.push_control(encode_line(approval_message(info)))
        self._routes_changed()
        self.note("live", f"{checked} connected (client {client or '?'})")
        try:
            await connection.run()
        finally:
            self.connections.discard(connection)
            self._routes_changed()
            if not self._closed:
                self.note("live", f"{checked} disconnected (client {client or '?'})")

    def _routes_changed(self) -> None:
        """Attach the remote port while a console is connected; wake waiting questions."""
        consoles = any(c.role == "console" for c in self.connections)
        if consoles and self._detach_ui is None and not self._closed:
            self._detach_ui = self.runtime.attach_remote_ui(self.approvals)
        elif not consoles and self._detach_ui is not None:
            self._detach_ui()
            self._detach_ui = None
        self.approvals.routes_changed()

    # -- acts -----------------------------------------------------------------------------
    async def act(self, connection: LiveConnection, message: Mapping[str, object]) -> ActionResult:
        if connection.role != "console":
            return ActionResult(False, READ_ONLY_MESSAGE)
        kind = message.get("type")
        if kind == STOP:
            return await self._stop(message.get("work_id"), connection)
        if kind == END_SESSION:
            return await self._end_session(message.get("session_id"), connection)
        if kind == TYPE_INPUT:
            return self._type_input(message.get("work_id"), message.get("data"), connection)
        if kind == ANSWER:
            request_id = message.get("request_id")
            if not isinstance(request_id, str):
                return ActionResult(False, "answer needs request_id (a string)")
            return self.approvals.answer(request_id, message.get("value"))
        return ActionResult(False, f"unknown act {kind!r}")

    async def _stop(self, work_id: object, connection: LiveConnection) -> ActionResult:
        work = self.work.get(work_id) if isinstance(work_id, str) else None
        if work is None:
            return ActionResult(False, f"unknown work {work_id}; take ids from the snapshot")
        if not work.running:
            return ActionResult(False, f"{work.id} has already ended ({work.state})")
        what = "shell job" if work.kind == "shell" else "code cell"
        if work.stopping:  # one stop at a time; this one would only wait for the first
            return ActionResult(
                False, f"{what} {work.id} is already stopping (a stop was requested earlier)"
            )
        self.note("live", f"stop {what} {work.id} (requested by a console)")
        confirmed = await work.stop()
        self.changed()
        if confirmed or work.state == "terminated":
            result = ActionResult(True, f"stopped {what} {work.id}")
        else:
            result = ActionResult(
                True, f"stop of {what} {work.id} requested; it is {work.state} (not yet confirmed)"
            )
        session = self.runtime.session(work.session_id)
        if session is not None:  # the journal, as for the embedded console's stop
            session.record_action(
                "stop", f"{what} {work.id}", result=result.message, origin=_origin(connection)
            )
        return result

    def _type_input(
        self, work_id: object, data: object, connection: LiveConnection
    ) -> ActionResult:
        """A person typed into a shell job's stdin (a password prompt). Neither the event
        log nor the journal gets the bytes, only how many; the model's next read says so."""
        work = self.work.get(work_id) if isinstance(work_id, str) else None
        if work is None:
            return ActionResult(False, f"unknown work {work_id}; take ids from the snapshot")
        if not isinstance(data, str) or not data:
            return ActionResult(False, "type_input needs data (a non-empty string)")
        raw = data.encode("utf-8")
        if len(raw) > MAX_TYPED_BYTES:
            return ActionResult(False, f"type_input takes at most {MAX_TYPED_BYTES} UTF-8 bytes")
        if work.kind != "shell":
            return ActionResult(False, f"{work.id} is a code cell; only a shell job has stdin")
        if not work.type_input(raw):
            return ActionResult(False, f"stdin of shell job {work.id} is closed or not open")
        result = ActionResult(True, f"typed {len(raw)} bytes into shell job {work.id}")
        self.note("live", f"{len(raw)} bytes typed into shell job {work.id} by a console")
        session = self.runtime.session(work.session_id)
        if session is not None:
            session.record_action(
                "type_input",
                f"shell job {work.id}: the operator typed {len(raw)} bytes (not recorded)",
                result=result.message,
                origin=_origin(connection),
            )
        return result

    async def _end_session(self, session_id: object, connection: LiveConnection) -> ActionResult:
        session = self.runtime.session(session_id) if isinstance(session_id, str) else None
        if session is None:
            return ActionResult(False, f"unknown session {session_id}; take ids from the snapshot")
        self.note("live", f"end session {session.id} (requested by a console)")
        await session.close()
        self.changed()
        result = ActionResult(True, f"ended session {session.id}")
        session.record_action(
            "end_session",
            f"session {session.id}",
            result=result.message,
            origin=_origin(connection),
        )
        return result


def bounded_client(value: object) -> str:
    """A console's `client` as events and the journal show it: one line, at most
    `MAX_CLIENT_CHARS` characters (the request line itself may be 64 KiB)."""
    text = " ".join(str(value).split())
    return text if len(text) <= MAX_CLIENT_CHARS else text[: MAX_CLIENT_CHARS - 1] + "…"


def _origin(connection: LiveConnection) -> CallOrigin:
    """A live console's act in the journal: transport `console`, client `live console <pid>`."""
    return CallOrigin("console", "live console", connection.client or None)


def _cancel(task: asyncio.Task[None]) -> None:
    task.cancel()


async def _write_line(writer: asyncio.StreamWriter, message: JSONObject) -> None:
    writer.write(json.dumps(message).encode("utf-8") + b"\n")
    with contextlib.suppress(ConnectionError, OSError):
        await writer.drain()
