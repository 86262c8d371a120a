"""A faithful in-process double of the live-control client API (`serve/client/live_client.py`).

`DoubleRuntime` plays one other runtime: its sessions, work, output, events and approval
requests. `DoubleClient` is what `LiveClient.connect` returns for it, with the pinned
semantics: `updates()` starts with a Snapshot and ends when the runtime goes away or the
client closes; `follow()` yields every character from the offset, in order, until the work
ends; a "monitor" connection gets the same updates (approval questions included) but every
act is refused; the first answer to a request wins and every console gets
`ApprovalClosed`. `DoubleBackend.watch` reports runtimes as tests add and remove them.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Literal

from pct_runtime.serve.client.live_client import (
    ActionResult,
    ApprovalClosed,
    ApprovalInfo,
    DiffInfo,
    EventInfo,
    LiveError,
    OutputChunk,
    RuntimeInfo,
    SessionInfo,
    Snapshot,
    Update,
    WorkInfo,
)
from pct_runtime.serve.live.control import RuntimeEntry

REFUSED = "this console is read-only (--monitor)"
_END = object()


class DoubleRuntime:
    def __init__(self, pid: int, *, transport: str = "stdio", kind: str = "serve") -> None:
        mcp = "stdio" if transport == "stdio" else f"http://127.0.0.1:{pid}/mcp"
        self.info = RuntimeInfo(pid, kind, transport, mcp, f"127.0.0.1:{pid}", 1_700_000_000.0)
        self.entry = RuntimeEntry(
            pid,
            "pct serve",
            self.info.control,
            mcp,
            self.info.started,
            Path(f"/double/{pid}.json"),
            transport,
            1,
        )
        self.sessions: list[SessionInfo] = []
        self.work: dict[str, WorkInfo] = {}
        self.output: dict[str, str] = {}
        self.clients: list[DoubleClient] = []
        self.stopped: list[str] = []
        self.typed: list[tuple[str, str]] = []
        self.ended: list[str] = []
        self.answers: dict[str, bool | str | None] = {}
        self.pending: dict[str, ApprovalInfo] = {}
        self.refuse_acts: str | None = None  # an act fails with this message
        #: Its control reply to `reload`, or the error raised (a runtime that does not answer).
        self.reload_reply: dict[str, object] | OSError = {
            "ok": True,
            "message": "Pi Codex Toolkit configuration reloaded.",
        }
        self.reloads = 0
        self._changed = asyncio.Condition()
        self.status_text = "Pi Codex Toolkit\nApply Patch:\n  configured: on\n  effective: active"

    # -- what the runtime does -----------------------------------------------------------
    def snapshot(self) -> Snapshot:
        return Snapshot(
            self.info, tuple(self.sessions), tuple(self.work.values()), self.status_text
        )

    def publish(self, update: Update, *, consoles_only: bool = False) -> None:
        for client in self.clients:
            if not consoles_only or client.role == "console":
                client.queue.put_nowait(update)

    def changed(self) -> None:
        self.publish(self.snapshot())

    def open_session(
        self, session_id: str, *, client: str = "codex-mcp-client", version: str = "0.5.0"
    ) -> None:
        self.sessions.append(SessionInfo(session_id, "stdio", client, version, None))
        self.changed()

    def start_work(
        self, work_id: str, session_id: str, *, kind: Literal["shell", "cell"] = "shell"
    ) -> None:
        path = f"/tmp/pct-output-double/{work_id}.stdout"
        self.work[work_id] = WorkInfo(
            work_id, kind, session_id, "running", None, f"job {work_id}", (path,)
        )
        self.output[work_id] = ""
        self.changed()

    async def write(self, work_id: str, text: str) -> None:
        async with self._changed:
            self.output[work_id] += text
            self._changed.notify_all()

    async def finish(self, work_id: str, state: str = "completed", exit_code: int = 0) -> None:
        old = self.work[work_id]
        self.work[work_id] = WorkInfo(
            old.id, old.kind, old.session_id, state, exit_code, old.title, old.recovery_paths
        )
        async with self._changed:
            self._changed.notify_all()
        self.changed()

    def event(self, kind: str, text: str) -> None:
        self.publish(EventInfo(1_700_000_000.0, kind, text))

    def ask(
        self,
        request_id: str,
        title: str,
        message: str,
        *,
        diffs: tuple[DiffInfo, ...] = (),
        options: tuple[str, ...] = (),
    ) -> ApprovalInfo:
        session = self.sessions[0] if self.sessions else None
        info = ApprovalInfo(
            request_id,
            "select" if options else "confirm",
            title,
            message,
            options,
            session.id if session else None,
            f"{session.client_name} {session.client_version}" if session else None,
            diffs,
        )
        self.pending[request_id] = info
        self.publish(info)  # monitors get it too (read-only), as the live hub sends it
        return info

    def close_request(
        self, request_id: str, reason: Literal["answered", "withdrawn", "timeout"]
    ) -> None:
        self.pending.pop(request_id, None)
        self.publish(ApprovalClosed(request_id, reason))

    def drop_connections(self) -> None:
        """End every connection but keep running (a runtime drops a console that fell
        behind; pending questions go to the next route)."""
        for request_id in list(self.pending):
            self.close_request(request_id, "withdrawn")
        self.go_away()

    def go_away(self) -> None:
        for client in list(self.clients):
            client.queue.put_nowait(_END)
        self.clients.clear()

    @property
    def roles(self) -> list[str]:
        return [c.role for c in self.clients]


class DoubleClient:
    def __init__(self, runtime: DoubleRuntime, role: Literal["console", "monitor"]) -> None:
        self.runtime_double = runtime
        self.runtime = runtime.info
        self.role = role
        self.queue: asyncio.Queue[object] = asyncio.Queue()
        self.closed = False

    async def updates(self) -> AsyncIterator[Update]:
        yield self.runtime_double.snapshot()
        while True:
            item = await self.queue.get()
            if item is _END:
                return
            assert isinstance(item, Snapshot | EventInfo | ApprovalInfo | ApprovalClosed)
            yield item

    async def follow(self, work_id: str, offset: int = 0) -> AsyncIterator[OutputChunk]:
        runtime = self.runtime_double
        if work_id not in runtime.work:
            raise LiveError(f"unknown work {work_id}")
        sent = offset

        def ready(sent: int) -> bool:
            return (
                len(runtime.output[work_id]) > sent
                or runtime.work[work_id].state not in ("running", "stopping")
                or self.closed
            )

        while True:
            async with runtime._changed:
                await runtime._changed.wait_for(lambda: ready(sent))  # noqa: B023 (awaited here)
            if self.closed:
                raise LiveError("connection lost")
            data = runtime.output[work_id][sent:]
            ended = runtime.work[work_id].state not in ("running", "stopping")
            # Deliver in pieces, as a socket would.
            for start in range(0, max(len(data), 1), 4096):
                piece = data[start : start + 4096]
                last = ended and start + 4096 >= len(data)
                yield OutputChunk(work_id, sent + start, piece, last)
            sent += len(data)
            if ended:
                return

    def _act(self) -> ActionResult | None:
        if self.role == "monitor":
            return ActionResult(False, REFUSED)
        if self.runtime_double.refuse_acts is not None:
            return ActionResult(False, self.runtime_double.refuse_acts)
        return None

    async def stop(self, work_id: str) -> ActionResult:
        refused = self._act()
        if refused is not None:
            return refused
        runtime = self.runtime_double
        runtime.stopped.append(work_id)
        await runtime.finish(work_id, "terminated", -15)
        return ActionResult(True, f"stopped {work_id}")

    async def type_input(self, work_id: str, data: str) -> ActionResult:
        refused = self._act()
        if refused is not None:
            return refused
        self.runtime_double.typed.append((work_id, data))
        return ActionResult(True, f"typed {len(data.encode())} bytes into shell job {work_id}")

    async def end_session(self, session_id: str) -> ActionResult:
        refused = self._act()
        if refused is not None:
            return refused
        runtime = self.runtime_double
        runtime.ended.append(session_id)
        runtime.sessions = [s for s in runtime.sessions if s.id != session_id]
        runtime.changed()
        return ActionResult(True, f"ended {session_id}")

    async def answer(self, request_id: str, value: bool | str | None) -> ActionResult:
        refused = self._act()
        if refused is not None:
            return refused
        runtime = self.runtime_double
        if request_id not in runtime.pending:
            return ActionResult(False, f"request {request_id} is no longer pending")
        runtime.answers[request_id] = value
        runtime.close_request(request_id, "answered")
        return ActionResult(True, "answered")

    async def aclose(self) -> None:
        self.closed = True
        self.queue.put_nowait(_END)
        runtime = self.runtime_double
        if self in runtime.clients:
            runtime.clients.remove(self)
        async with runtime._changed:
            runtime._changed.notify_all()


class DoubleBackend:
    def __init__(self) -> None:
        self.runtimes: dict[Path, DoubleRuntime] = {}
        self.changes: asyncio.Queue[tuple[Literal["added", "removed"], RuntimeEntry]] = (
            asyncio.Queue()
        )
        self.excluded: list[int | None] = []

    def add(self, runtime: DoubleRuntime) -> DoubleRuntime:
        self.runtimes[runtime.entry.path] = runtime
        self.changes.put_nowait(("added", runtime.entry))
        return runtime

    def remove(self, runtime: DoubleRuntime) -> None:
        self.runtimes.pop(runtime.entry.path, None)
        runtime.go_away()
        self.changes.put_nowait(("removed", runtime.entry))

    async def watch(
        self, exclude_pid: int | None
    ) -> AsyncIterator[tuple[Literal["added", "removed"], RuntimeEntry]]:
        self.excluded.append(exclude_pid)
        while True:
            yield await self.changes.get()

    async def connect(
        self, entry: RuntimeEntry, role: Literal["console", "monitor"]
    ) -> DoubleClient:
        runtime = self.runtimes.get(entry.path)
        if runtime is None:
            raise LiveError(f"{entry.label} is gone")
        client = DoubleClient(runtime, role)
        runtime.clients.append(client)
        return client

    async def reload(self, entry: RuntimeEntry) -> dict[str, object]:
        runtime = self.runtimes.get(entry.path)
        if runtime is None:
            raise ConnectionRefusedError(f"{entry.label} is gone")
        runtime.reloads += 1
        if isinstance(runtime.reload_reply, OSError):
            raise runtime.reload_reply
        return runtime.reload_reply
