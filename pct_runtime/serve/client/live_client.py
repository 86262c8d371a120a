"""The console's side of live control: connect to a runtime, watch it, act on it.

`LiveClient.connect(entry, token, role=...)` opens the runtime's control socket and
subscribes (docs/LIVE_PROTOCOL.md). One reader task sorts what arrives: updates
(snapshots, events, approvals and their closing) for `updates()`, output for the
`follow()` of its work, replies for the act that is waiting on them. `watch_runtimes`
reports runtimes of an agent dir as they register and go away.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import logging
import os
from collections.abc import AsyncIterator, Mapping
from pathlib import Path
from typing import Literal

from watchfiles import awatch

from pct_runtime.jsontypes import JSONObject
from pct_runtime.serve.live.control import MAX_REPLY, RuntimeEntry, list_runtimes
from pct_runtime.serve.live.protocol import (
    ANSWER,
    END_SESSION,
    FOLLOW,
    OUTPUT,
    PROTOCOL_VERSION,
    REPLY,
    STOP,
    TYPE_INPUT,
    UNFOLLOW,
    ActionResult,
    ApprovalClosed,
    ApprovalInfo,
    DiffInfo,
    EventInfo,
    OutputChunk,
    RuntimeInfo,
    SessionInfo,
    Snapshot,
    Update,
    WorkInfo,
    output_from_json,
    runtime_from_json,
    update_from_json,
)

__all__ = [
    "PROTOCOL_VERSION",
    "ActionResult",
    "ApprovalClosed",
    "ApprovalInfo",
    "DiffInfo",
    "EventInfo",
    "LiveClient",
    "LiveError",
    "OutputChunk",
    "RuntimeEntry",
    "RuntimeInfo",
    "SessionInfo",
    "Snapshot",
    "Update",
    "WorkInfo",
    "watch_runtimes",
]

_log = logging.getLogger(__name__)

#: Seconds to connect and be accepted; an act's reply waits as long as the act takes.
CONNECT_TIMEOUT = 10.0

_END = object()


class LiveError(Exception):
    """Cannot connect, token refused, unsupported version, or the connection was lost."""


class LiveClient:
    """One live-control connection. Use `connect`, then `updates()`; `aclose()` at the end."""

    def __init__(
        self,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
        runtime: RuntimeInfo,
        role: Literal["console", "monitor"],
    ) -> None:
        self.runtime = runtime
        self.role = role
        self._reader = reader
        self._writer = writer
        self._updates: asyncio.Queue[Update | object] = asyncio.Queue()
        self._follows: dict[str, asyncio.Queue[OutputChunk | object]] = {}
        self._replies: dict[int, asyncio.Future[ActionResult]] = {}
        self._ids = itertools.count(1)
        self._lost: str | None = None
        self._task = asyncio.get_running_loop().create_task(self._read_loop())

    @classmethod
    async def connect(
        cls, entry: RuntimeEntry, token: str, *, role: Literal["console", "monitor"]
    ) -> LiveClient:
        if not entry.live:
            raise LiveError(
                f"{entry.label} does not speak live control (an older pct started it); "
                "restart it to watch it from a console"
            )
        host, _, port = entry.control.rpartition(":")
        try:
            reader, writer = await asyncio.wait_for(
                asyncio.open_connection(host, int(port), limit=MAX_REPLY), CONNECT_TIMEOUT
            )
        except (OSError, TimeoutError, ValueError) as exc:
            problem = exc or type(exc).__name__
            raise LiveError(f"cannot connect to {entry.label}: {problem}") from exc
        request = {
            "token": token,
            "op": "subscribe",
            "version": PROTOCOL_VERSION,
            "role": role,
            "client": str(os.getpid()),
        }
        try:
            writer.write(json.dumps(request).encode("utf-8") + b"\n")
            await writer.drain()
            line = await asyncio.wait_for(reader.readline(), CONNECT_TIMEOUT)
            reply = json.loads(line) if line else None
            if not isinstance(reply, dict):
                raise LiveError(f"{entry.label} closed the connection without accepting it")
            if reply.get("ok") is not True:
                raise LiveError(f"{entry.label} refused: {reply.get('error', 'no reason given')}")
            runtime = reply.get("runtime")
            info = runtime_from_json(runtime) if isinstance(runtime, dict) else None
        except LiveError:
            writer.close()
            raise
        except (OSError, TimeoutError, ValueError) as exc:
            writer.close()
            raise LiveError(f"{entry.label} did not accept: {exc or type(exc).__name__}") from exc
        if info is None:
            info = RuntimeInfo(
                entry.pid, entry.kind, entry.transport, entry.mcp, entry.control, entry.started
            )
        return cls(reader, writer, info, role)

    # -- reading --------------------------------------------------------------------------
    async def _read_loop(self) -> None:
        reason = "the runtime closed the connection"
        try:
            while line := await self._reader.readline():
                try:
                    message = json.loads(line)
                except ValueError:
                    continue
                if isinstance(message, dict):
                    self._dispatch(message)
        except (ConnectionError, OSError, ValueError) as exc:
            reason = f"connection lost: {exc or type(exc).__name__}"
        finally:
            self._lose(reason)

    def _dispatch(self, message: Mapping[str, object]) -> None:
        kind = message.get("type")
        try:
            if kind == REPLY:
                rid = message.get("id")
                future = self._replies.pop(rid, None) if isinstance(rid, int) else None
                if future is not None and not future.done():
                    text = message.get("message")
                    ok = message.get("ok") is True
                    future.set_result(ActionResult(ok, text if isinstance(text, str) else ""))
                return
            if kind == OUTPUT:
                chunk = output_from_json(message)
                queue = self._follows.get(chunk.work_id)
                if queue is not None:
                    queue.put_nowait(chunk)
                return
            update = update_from_json(message)
        except ValueError:
            _log.debug("malformed live message dropped: %r", message)
            return
        if update is not None:  # unknown types are ignored (a newer runtime)
            self._updates.put_nowait(update)

    def _lose(self, reason: str) -> None:
        if self._lost is not None:
            return
        self._lost = reason
        self._updates.put_nowait(_END)
        for queue in self._follows.values():
            queue.put_nowait(_END)
        for future in self._replies.values():
            if not future.done():
                future.set_exception(LiveError(reason))
        self._replies.clear()

    @property
    def connected(self) -> bool:
        return self._lost is None

    # -- the API --------------------------------------------------------------------------
    async def updates(self) -> AsyncIterator[Update]:
        """Snapshots, events, approvals and their closing; the first is a Snapshot. Ends
        when the runtime goes away (or `aclose()`)."""
        while True:
            item = await self._updates.get()
            if item is _END:
                self._updates.put_nowait(_END)  # a second iterator ends too
                return
            assert isinstance(item, Snapshot | EventInfo | ApprovalInfo | ApprovalClosed)
            yield item

    async def follow(self, work_id: str, offset: int = 0) -> AsyncIterator[OutputChunk]:
        """All output of a work from `offset`, in order, until it ends (the last chunk has
        `ended`). A chunk whose offset is past the previous chunk's end marks text the
        runtime could not give (older than the first follow's window, or lost by the
        capture): it is in the work's recovery files. Raises LiveError when refused or
        when the connection is lost."""
        if work_id in self._follows:
            raise LiveError(f"{work_id} is already followed on this connection")
        queue: asyncio.Queue[OutputChunk | object] = asyncio.Queue()
        self._follows[work_id] = queue
        ended = False
        try:
            result = await self._request({"type": FOLLOW, "work_id": work_id, "offset": offset})
            if not result.ok:
                raise LiveError(result.message)
            while True:
                item = await queue.get()
                if item is _END:
                    raise LiveError(self._lost or "the connection closed")
                assert isinstance(item, OutputChunk)
                yield item
                if item.ended:
                    ended = True
                    return
        finally:
            self._follows.pop(work_id, None)
            if not ended and self._lost is None:
                with contextlib.suppress(Exception):
                    await asyncio.shield(self._request({"type": UNFOLLOW, "work_id": work_id}))

    async def stop(self, work_id: str) -> ActionResult:
        return await self._request({"type": STOP, "work_id": work_id})

    async def end_session(self, session_id: str) -> ActionResult:
        return await self._request({"type": END_SESSION, "session_id": session_id})

    async def type_input(self, work_id: str, data: str) -> ActionResult:
        """Type `data` into a shell job's stdin for the person at this console."""
        return await self._request({"type": TYPE_INPUT, "work_id": work_id, "data": data})

    async def answer(self, request_id: str, value: bool | str | None) -> ActionResult:
        return await self._request({"type": ANSWER, "request_id": request_id, "value": value})

    async def _request(self, message: JSONObject) -> ActionResult:
        if self._lost is not None:
            raise LiveError(self._lost)
        request_id = next(self._ids)
        future: asyncio.Future[ActionResult] = asyncio.get_running_loop().create_future()
        self._replies[request_id] = future
        try:
            line = json.dumps({**message, "id": request_id}).encode("utf-8") + b"\n"
            self._writer.write(line)
            await self._writer.drain()
        except (ConnectionError, OSError) as exc:
            self._replies.pop(request_id, None)
            raise LiveError(f"connection lost: {exc or type(exc).__name__}") from exc
        return await future

    async def aclose(self) -> None:
        self._writer.close()
        with contextlib.suppress(Exception):
            await self._writer.wait_closed()
        self._task.cancel()
        with contextlib.suppress(BaseException):
            await self._task
        self._lose("closed by this client")


async def watch_runtimes(
    agent_dir: Path, *, exclude_pid: int | None = None, interval: float = 0.5
) -> AsyncIterator[tuple[Literal["added", "removed"], RuntimeEntry]]:
    """Every registered runtime as `added` (those present at first, then new ones) and
    `removed` when its entry goes away or its process dies; runs until cancelled.

    The registry directory is watched, so a runtime is reported as soon as it registers
    (before it serves MCP): a console connects before the agent's first question, as far
    as it can without the runtime ever waiting for it. The scan every `interval` also
    catches a process that died without removing its entry."""
    known: dict[Path, RuntimeEntry] = {}
    wake = asyncio.Event()
    stop = asyncio.Event()
    watcher = asyncio.get_running_loop().create_task(_watch_dir(agent_dir, wake, stop))
    try:
        while True:
            wake.clear()
            found = await asyncio.to_thread(list_runtimes, agent_dir)
            current = {e.path: e for e in found if e.pid != exclude_pid}
            for path in [p for p in known if p not in current]:
                yield "removed", known.pop(path)
            for path, entry in current.items():
                if path not in known:
                    known[path] = entry
                    yield "added", entry
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(wake.wait(), interval)
    finally:
        stop.set()
        watcher.cancel()
        with contextlib.suppress(BaseException):
            await watcher


async def _watch_dir(agent_dir: Path, wake: asyncio.Event, stop: asyncio.Event) -> None:
    """Set `wake` on every change in the registry directory, while it exists; the scan
    alone covers the time before the first runtime creates it, or a failing watch."""
    directory = agent_dir / "pct" / "runtimes"
    while not stop.is_set():
        if directory.is_dir():
            wake.set()  # a runtime may have registered before the watch began
            try:
                async for _ in awatch(directory, stop_event=stop, step=20, rust_timeout=1000):
                    wake.set()
            except Exception:  # e.g. the directory went away, or no inotify watch left
                _log.debug("registry watch failed; scanning only", exc_info=True)
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(stop.wait(), 1.0)
