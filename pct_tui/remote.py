"""The other pct runtimes of the console's agent dir, seen through the live-control channel.

Agents attach `pct serve` on stdio (`pct attach codex`), so their runtimes are separate
processes. `RemoteRuntimes` watches the live-control registry, connects to each runtime
but this console's own, and mirrors what it reports: the latest snapshot (sessions, shell
jobs, code cells), its events (into the Events screen, labelled with the runtime) and its
approval requests (into the console's one approval queue). A runtime that goes away
disappears, and its open questions close. Acting (stop, end session, answer) goes through
that runtime's client; a `--monitor` console connects read-only and never acts.

The live-control client is imported where it is first used, after the first frame
(start-up time), hence the function-level imports below.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Awaitable, Callable, Coroutine
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Literal, Protocol

from pct_tui.model import ActionResult, StatusPage
from pct_tui.state.approvals import Answer, ApprovalQueue, ApprovalRequest, drawn_diffs, who_text
from pct_tui.state.work import told_exit

if TYPE_CHECKING:
    from pct_runtime.jsontypes import JSONMapping
    from pct_runtime.serve.client.live_client import (
        ApprovalInfo,
        OutputChunk,
        RuntimeInfo,
        SessionInfo,
        Snapshot,
        Update,
        WorkInfo,
    )
    from pct_runtime.serve.live.control import RuntimeEntry

_log = logging.getLogger(__name__)

Role = Literal["console", "monitor"]
#: A lost connection to a still-registered runtime is retried after this, doubling to the max.
RETRY_SECONDS = 1.0
RETRY_MAX_SECONDS = 10.0
#: What every refused act says in a `--monitor` console (the runtime says the same).
READ_ONLY = "This console is read-only (--monitor)"


class RemoteClient(Protocol):
    """What the console uses of a `LiveClient` (tests drive a faithful double)."""

    runtime: RuntimeInfo

    def updates(self) -> AsyncIterator[Update]: ...
    def follow(self, work_id: str, offset: int = 0) -> AsyncIterator[OutputChunk]: ...
    async def stop(self, work_id: str) -> ActionResult: ...
    async def type_input(self, work_id: str, data: str) -> ActionResult: ...
    async def end_session(self, session_id: str) -> ActionResult: ...
    async def answer(self, request_id: str, value: Answer) -> ActionResult: ...
    async def aclose(self) -> None: ...


class EventLog(Protocol):
    """The Events screen's door: `at` is when the runtime says it happened."""

    def __call__(self, kind: str, text: str, at: float | None = None) -> None: ...


class LiveBackend(Protocol):
    """Where runtimes come from and how to reach one."""

    def watch(
        self, exclude_pid: int | None
    ) -> AsyncIterator[tuple[Literal["added", "removed"], RuntimeEntry]]: ...
    async def connect(self, entry: RuntimeEntry, role: Role) -> RemoteClient: ...

    async def reload(self, entry: RuntimeEntry) -> JSONMapping:
        """Ask it to re-read the config file, as `pct reload` does (its control reply)."""
        ...


class RegistryBackend:
    """The real one: the agent dir's registry and each runtime's control token."""

    def __init__(self, agent_dir: Path) -> None:
        self.agent_dir = agent_dir

    def watch(
        self, exclude_pid: int | None
    ) -> AsyncIterator[tuple[Literal["added", "removed"], RuntimeEntry]]:
        # Deferred for start-up time: the live-control stack loads after the first frame.
        from pct_runtime.serve.client.live_client import watch_runtimes

        return watch_runtimes(self.agent_dir, exclude_pid=exclude_pid)

    async def connect(self, entry: RuntimeEntry, role: Role) -> RemoteClient:
        # Deferred for start-up time, as above.
        from pct_runtime.serve.client.live_client import LiveClient
        from pct_runtime.serve.client.running import control_token

        token = await asyncio.to_thread(control_token, self.agent_dir)
        client: RemoteClient = await LiveClient.connect(entry, token, role=role)
        return client

    async def reload(self, entry: RuntimeEntry) -> JSONMapping:
        from pct_runtime.serve.client.running import control_token
        from pct_runtime.serve.live.control import request  # deferred, as above

        token = await asyncio.to_thread(control_token, self.agent_dir)
        return await request(entry, token, "reload")


#: What a user typed to start a runtime of each kind the protocol reports.
KIND_NAMES = {"serve": "pct serve", "console": "pct-tui"}


def kind_name(info: RuntimeInfo) -> str:
    return KIND_NAMES.get(info.kind, info.kind)


def runtime_label(info: RuntimeInfo) -> str:
    """`pct serve pid 4242 (stdio)`: how the console names a runtime everywhere."""
    return f"{kind_name(info)} pid {info.pid} ({info.transport})"


def client_label(session: SessionInfo | None) -> str:
    if session is None or not session.client_name:
        return "—"
    return " ".join(p for p in (session.client_name, session.client_version) if p)


@dataclass(eq=False)
class RemoteRuntime:
    """One connected runtime and what it last reported (a `model.RuntimeView`)."""

    key: str
    client: RemoteClient
    snapshot: Snapshot | None = None
    rows: dict[str, RemoteWork] = field(default_factory=dict)
    gone: bool = False

    @property
    def info(self) -> RuntimeInfo:
        return self.snapshot.runtime if self.snapshot is not None else self.client.runtime

    @property
    def label(self) -> str:
        return runtime_label(self.info)

    @property
    def line_prefix(self) -> str:
        return f"{self.key}|"

    @property
    def header_key(self) -> str:
        return f"{self.key}|runtime"

    @property
    def header(self) -> tuple[str, str, str, str]:
        info = self.info
        return (f"pid {info.pid}", kind_name(info), info.transport, info.mcp)

    @property
    def about(self) -> str:
        info = self.info
        return (
            f"{runtime_label(info)} · MCP {info.mcp} · control {info.control}\n"
            "Another pct runtime of this agent dir (an agent's own `pct serve`)."
        )

    @property
    def where(self) -> str:
        return self.label

    @property
    def option(self) -> str:
        return self.label

    @property
    def infos(self) -> tuple[SessionInfo, ...]:
        return self.snapshot.sessions if self.snapshot is not None else ()

    @property
    def sessions(self) -> tuple[RemoteSession, ...]:
        return tuple(RemoteSession(self, info) for info in self.infos)

    def session(self, session_id: str | None) -> RemoteSession | None:
        info = self.session_info(session_id)
        return RemoteSession(self, info) if info is not None else None

    def session_info(self, session_id: str | None) -> SessionInfo | None:
        return next((s for s in self.infos if s.id == session_id), None)

    @property
    def work(self) -> tuple[RemoteWork, ...]:
        return tuple(self.rows.values())

    def session_line(self, session_id: str) -> str:
        """A session of this runtime as the Status and Sessions screens name it."""
        session = self.session_info(session_id)
        model = (session.model if session else None) or "—"
        client = client_label(session)
        return f"Session {session_id} of {self.label} · client {client} · model {model}"

    @property
    def status_text(self) -> str:
        return self.snapshot.status_text if self.snapshot is not None else "Connecting…"

    def status(self) -> StatusPage:
        return StatusPage(f"{self.label} · MCP {self.info.mcp}", self.status_text)

    async def end_session(self, session_id: str) -> ActionResult:
        return await _act(self, self.client.end_session(session_id))


@dataclass(frozen=True)
class RemoteSession:
    """A session of another runtime, as its last snapshot reported it."""

    runtime: RemoteRuntime
    info: SessionInfo

    @property
    def id(self) -> str:
        return self.info.id

    @property
    def cells(self) -> tuple[str, str, str]:
        return (f"session ({self.info.kind})", self.info.model or "—", client_label(self.info))

    @property
    def option(self) -> str:
        return f"  {self.id} · {self.info.model or '—'}"

    @property
    def detail(self) -> str:
        line = self.runtime.session_line(self.id)
        return f"{line}\nEnter on a job or cell opens its output."

    def status(self) -> StatusPage:
        text = f"A fresh session of that runtime:\n{self.runtime.status_text}"
        return StatusPage(self.runtime.session_line(self.id), text)


@dataclass(eq=False)
class RemoteWork:
    """A shell job or code cell of another runtime (a `model.Work`)."""

    runtime: RemoteRuntime
    info: WorkInfo
    _followers: set[asyncio.Task[None]] = field(default_factory=set)

    @property
    def session_id(self) -> str:
        return self.info.session_id

    @property
    def kind(self) -> str:
        return "code" if self.info.kind == "cell" else "shell"

    @property
    def id(self) -> str:
        return self.info.id

    @property
    def state(self) -> str:
        if self.runtime.gone and self.info.state in ("running", "stopping"):
            return "gone"  # its runtime ended: nothing more will be known
        return self.info.state

    @property
    def running(self) -> bool:
        return self.state in ("running", "stopping")

    @property
    def stop_known(self) -> bool:
        return False  # its runtime answers a second stop itself

    @property
    def where(self) -> str:
        return self.runtime.label

    @property
    def exit_code(self) -> str:
        if self.info.kind != "shell":
            return "—"  # a cell has no exit status: its state says how it ended
        return told_exit(self.info.exit_code, ended=not self.running)

    def recovery_paths(self) -> list[str]:
        return list(self.info.recovery_paths) or ["—"]

    def recovery_lines(self) -> list[str]:
        where = f"{self.runtime.label}: {self.info.title}"
        paths = [f"recovery: {p}" for p in self.info.recovery_paths]
        return [where, *(paths or ["recovery: none yet"])]

    def initial_text(self) -> str:
        """Nothing: `follow` streams the whole output from offset 0."""
        return ""

    def follow(self, listener: Callable[[str], None]) -> Callable[[], None]:
        """Stream the work's output from the owning runtime to `listener` until the
        returned function is called. A jump the runtime's bounded live log could not fill,
        or a lost connection, is said in the text: the viewer never silently shows less."""
        client = self.runtime.client
        work_id = self.id

        async def pump() -> None:
            from pct_runtime.serve.client.live_client import LiveError  # deferred: start-up time

            offset = 0
            try:
                async for chunk in client.follow(work_id, 0):
                    if chunk.offset > offset:  # the runtime's bounded live log moved on
                        listener(
                            f"\n[{chunk.offset - offset} characters are only in the recovery "
                            "files]\n"
                        )
                    data = chunk.data[max(0, offset - chunk.offset) :]
                    offset = max(offset, chunk.offset + len(chunk.data))
                    listener(data)
                    if chunk.ended:
                        return
            except LiveError as exc:
                listener(f"\n[output stream of {self.runtime.label} lost: {exc}]\n")

        task = asyncio.get_running_loop().create_task(pump())
        self._followers.add(task)
        task.add_done_callback(self._followers.discard)

        def stop() -> None:
            task.cancel()

        return stop

    async def stop(self) -> ActionResult:
        return await _act(self.runtime, self.runtime.client.stop(self.id))

    @property
    def takes_input(self) -> bool:
        return self.info.kind == "shell" and self.running  # its runtime refuses a closed one

    async def type_input(self, text: str) -> ActionResult:
        return await _act(self.runtime, self.runtime.client.type_input(self.id, text))

    def unfollow_all(self) -> None:
        for task in list(self._followers):
            task.cancel()


async def _act(runtime: RemoteRuntime, call: Awaitable[ActionResult]) -> ActionResult:
    from pct_runtime.serve.client.live_client import LiveError  # deferred: start-up time

    try:
        return await call
    except LiveError as exc:
        return ActionResult(False, f"{runtime.label} did not answer: {exc}")


class RemoteRuntimes:
    """Discovery, mirroring and approval routing for every other runtime.

    The callbacks keep this module free of the app: `changed()` after any snapshot or
    runtime coming or going, `log(kind, text, at)` for the Events screen, `ask(request)` puts
    a question into the console's one approval queue (`approvals`, which also finds and
    withdraws a runtime's questions) and waits for its answer, `notify(text)` reports a
    failure to act.
    """

    def __init__(
        self,
        backend: LiveBackend,
        *,
        role: Role,
        changed: Callable[[], None],
        log: EventLog,
        ask: Callable[[ApprovalRequest], Awaitable[Answer]],
        approvals: ApprovalQueue,
        notify: Callable[[str], None],
    ) -> None:
        self.backend = backend
        self.role: Role = role
        self._changed = changed
        self._log = log
        self._ask = ask
        self._approvals = approvals
        self._notify = notify
        #: Connected runtimes by registry key, in the order they were found.
        self.runtimes: dict[str, RemoteRuntime] = {}
        self._tasks: set[asyncio.Task[None]] = set()
        #: Registered runtimes (by key) and the task keeping each connected.
        self._entries: dict[str, RuntimeEntry] = {}
        self._links: dict[str, asyncio.Task[None]] = {}
        self._closed = False

    @property
    def read_only(self) -> bool:
        return self.role == "monitor"

    def all(self) -> list[RemoteRuntime]:
        return list(self.runtimes.values())

    def registered(self) -> list[tuple[RuntimeEntry, str]]:
        """Every other runtime in the registry, connected or not, with its label."""
        out = []
        for key, entry in self._entries.items():
            runtime = self.runtimes.get(key)
            if runtime is not None:
                out.append((entry, runtime.label))
            else:
                out.append(
                    (entry, f"{entry.kind} pid {entry.pid} ({entry.transport or entry.mcp})")
                )
        return out

    # -- discovery ---------------------------------------------------------------------
    async def run(self, exclude_pid: int | None) -> None:
        """Follow the registry until closed: stay connected to each runtime in it."""
        from pct_runtime.serve.client.live_client import LiveError  # deferred: start-up time

        try:
            async for change, entry in self.backend.watch(exclude_pid):
                if self._closed:
                    return
                key = str(entry.path)
                if change == "added":
                    self._entries[key] = entry
                    if key not in self._links:
                        self._links[key] = self._spawn(self._link(key, entry))
                else:
                    self._entries.pop(key, None)
                    runtime = self.runtimes.get(key)
                    if runtime is not None:
                        self._drop(runtime, "ended")
        except LiveError as exc:
            self._log("runtime", f"runtime discovery stopped: {exc}")

    def _spawn(self, coro: Coroutine[None, None, None]) -> asyncio.Task[None]:
        task = asyncio.get_running_loop().create_task(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task

    async def _link(self, key: str, entry: RuntimeEntry) -> None:
        """Stay connected to one runtime while it is registered: a runtime may drop a
        console that fell behind, and a loaded machine must not lose it from view."""
        from pct_runtime.serve.client.live_client import LiveError  # deferred: start-up time

        if entry.live < 1:  # its registry entry says it speaks no live control
            self._log("runtime", f"{entry.label} predates live control: restart it to see it here")
            self._links.pop(key, None)
            return
        failures = 0
        try:
            while not self._closed and key in self._entries:
                try:
                    client = await self.backend.connect(entry, self.role)
                except (LiveError, OSError) as exc:
                    if not failures:
                        self._log("runtime", f"could not connect to {entry.label}: {exc}")
                    failures += 1
                    await asyncio.sleep(min(RETRY_SECONDS * 2**failures, RETRY_MAX_SECONDS))
                    continue
                if self._closed:
                    await _close(client)
                    return
                failures = 0
                runtime = RemoteRuntime(key, client)
                self.runtimes[key] = runtime
                self._log("runtime", f"connected {runtime.label} mcp={runtime.info.mcp}")
                self._changed()
                reason = await self._pump(runtime)
                if runtime.gone:
                    continue  # the registry said it ended
                # A runtime that exited leaves the registry within the watcher's interval.
                await asyncio.sleep(RETRY_SECONDS)
                if not runtime.gone:
                    again = key in self._entries and not self._closed
                    self._drop(runtime, f"{reason}; reconnecting" if again else "ended")
        finally:
            self._links.pop(key, None)

    async def _pump(self, runtime: RemoteRuntime) -> str:
        """Apply the runtime's updates until its connection ends; say why it ended."""
        from pct_runtime.serve.client.live_client import LiveError  # deferred: start-up time

        try:
            async for update in runtime.client.updates():
                if runtime.gone:
                    return "ended"
                self._dispatch(runtime, update)
        except LiveError as exc:
            return f"connection lost: {exc}"
        except Exception as exc:  # a faulty update must not end the console
            _log.exception("live update from %s failed", runtime.label)
            return f"connection lost: {type(exc).__name__}"
        return "connection closed"

    def _drop(self, runtime: RemoteRuntime, reason: str) -> None:
        """The runtime went away: forget it, close its questions and its connection."""
        runtime.gone = True
        if self.runtimes.get(runtime.key) is runtime:
            del self.runtimes[runtime.key]
        self._approvals.withdraw_from(runtime)
        # Open viewers end on their own when the connection closes, saying so in the text.
        self._log("runtime", f"{runtime.label} {reason}")
        self._changed()
        self._spawn(_close(runtime.client))

    # -- updates -----------------------------------------------------------------------
    def _dispatch(self, runtime: RemoteRuntime, update: Update) -> None:
        # Deferred for start-up time (cached after the first update).
        from pct_runtime.serve.client.live_client import (
            ApprovalClosed,
            ApprovalInfo,
            EventInfo,
            Snapshot,
        )

        if isinstance(update, Snapshot):
            self._on_snapshot(runtime, update)
        elif isinstance(update, EventInfo):
            self._log(update.kind, f"[{runtime.label}] {update.text}", update.time)
        elif isinstance(update, ApprovalInfo):
            self._on_approval(runtime, update)
        elif isinstance(update, ApprovalClosed):
            request = self._approvals.find(runtime, update.request_id)
            if request is not None:
                self._approvals.withdraw(request)

    def _on_snapshot(self, runtime: RemoteRuntime, snapshot: Snapshot) -> None:
        runtime.snapshot = snapshot
        rows: dict[str, RemoteWork] = {}
        for info in snapshot.work:
            row = runtime.rows.get(info.id)
            if row is None:
                row = RemoteWork(runtime, info)
            else:
                row.info = info
            rows[info.id] = row
        for work_id, row in runtime.rows.items():
            if work_id not in rows:
                row.unfollow_all()
        runtime.rows = rows
        self._changed()

    def _on_approval(self, runtime: RemoteRuntime, info: ApprovalInfo) -> None:
        if self._approvals.find(runtime, info.request_id) is not None:
            return  # already in the queue (a question is re-sent to a new subscriber)
        session = runtime.session_info(info.session_id)
        model = session.model if session is not None else None
        client = info.client or client_label(session)
        request = ApprovalRequest(
            info.kind,
            info.title,
            info.message,
            info.options,
            who=f"{runtime.label} · {who_text(info.session_id, client, model)}",
            diffs=drawn_diffs(info.diffs),
            source=runtime,
            ref=info.request_id,
            read_only=self.read_only,  # a monitor shows it, without answer keys
        )
        self._approvals.put(request)
        self._spawn(self._answer(runtime, info.request_id, request))

    async def _answer(
        self, runtime: RemoteRuntime, request_id: str, request: ApprovalRequest
    ) -> None:
        try:
            value = await self._ask(request)
        except asyncio.CancelledError:
            task = asyncio.current_task()
            if task is not None and task.cancelling():
                raise
            return  # withdrawn: answered elsewhere, timed out, or the runtime went away
        if runtime.gone or request.read_only:
            return
        result = await _act(runtime, runtime.client.answer(request_id, value))
        if not result.ok:
            self._notify(f"{runtime.label}: {result.message}")

    # -- shutdown ----------------------------------------------------------------------
    async def aclose(self) -> None:
        """Disconnect from every runtime; their pending questions go to their next route
        (this console never answers them on the way out)."""
        self._closed = True
        runtimes = self.all()
        self.runtimes.clear()
        for runtime in runtimes:
            runtime.gone = True
            self._approvals.withdraw_from(runtime)
        for task in list(self._tasks):
            task.cancel()
        if self._tasks:
            await asyncio.wait(list(self._tasks), timeout=2.0)
        await asyncio.gather(*(_close(r.client) for r in runtimes))


async def _close(client: RemoteClient) -> None:
    with contextlib.suppress(Exception):
        await asyncio.wait_for(client.aclose(), 2.0)
