"""One live-control connection: a bounded outbox and a reader of the client's acts.

Producers (tool calls, output, events) only touch in-memory state here, synchronously and
in constant time; nothing a producer does ever waits on a socket:

- replies, approvals and approval_closed are few and never dropped; they wake the
  connection's writer at once;
- a snapshot is the hub's generation number: when the connection's lags, it gets the
  hub's current snapshot (built once for every connection, and encoded once);
- events are lines the hub encoded once and every connection shares; they queue up to
  `MAX_EVENTS`, past which the queue is dropped and one fresh snapshot is sent instead;
- output is never queued: the writer reads each followed work's log from its offset.

Snapshots, events and output are not written the moment they happen: the hub flushes every
connection at most once per `FLUSH_INTERVAL`, so a burst (a tool call makes several events
and two snapshot changes) costs each connection one write, not one per message. A
connection that follows nothing and whose socket keeps up is written directly by the
flush; only the others wake their writer task. With hundreds of consoles connected, a call
so costs the runtime a few microseconds per console, not a task switch and an encoding.

A console whose socket has not drained for `STALL_SECONDS` stops counting as an approval
route, so a question pending on it falls back to the next route.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import time
from collections import deque
from collections.abc import Mapping
from typing import Protocol

from pct_runtime.serve.live.protocol import (
    CLIENT_TYPES,
    FOLLOW,
    MAX_OUTPUT_CHUNK,
    UNFOLLOW,
    ActionResult,
    OutputChunk,
    Role,
    encode_line,
    output_message,
    reply_message,
)
from pct_runtime.serve.live.worklog import WorkLog

_log = logging.getLogger(__name__)

#: Events a connection holds while its socket is full (the lines are shared, so this costs
#: a pointer each); past it they are dropped for one fresh snapshot.
MAX_EVENTS = 1024
#: Replies and approvals waiting for a client that sends acts but never reads: past this
#: the connection is closed (they are never dropped one by one).
MAX_CONTROL = 1024
#: A console whose socket has not drained for this long is not an approval route.
STALL_SECONDS = 5.0
#: Snapshots, events and output reach a connection at most this long after they happen,
#: and snapshots are built at most this often (a burst becomes one).
FLUSH_INTERVAL = 0.05
#: Longest client line (acts are small).
MAX_CLIENT_LINE = 64 * 1024


class HubPort(Protocol):
    """What a connection needs of the hub that owns it (the hub imports this module)."""

    @property
    def generation(self) -> int: ...
    def keep(self, task: asyncio.Task[None]) -> None: ...
    def soon(self) -> None: ...
    def snapshot_line(self) -> tuple[int, bytes]: ...
    def log_for(self, work_id: str) -> WorkLog | None: ...
    def release_log(self, log: WorkLog) -> None: ...
    async def act(
        self, connection: LiveConnection, message: Mapping[str, object]
    ) -> ActionResult: ...


class LiveConnection:
    def __init__(
        self,
        hub: HubPort,
        role: Role,
        client: str,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
    ) -> None:
        self.hub = hub
        self.role: Role = role
        self.client = client
        self._reader = reader
        self._writer = writer
        self._control: deque[bytes] = deque()
        self._events: deque[bytes] = deque()
        self._sent_generation = -1  # the first message after the accept line: a snapshot
        self._follows: dict[str, tuple[WorkLog, int]] = {}
        self._output_due = False
        self._wake = asyncio.Event()
        self._wake.set()  # the first snapshot goes out at once
        self._writing = False  # the writer task is between its wake and its next wait
        self._drain_since: float | None = None
        self.closed = False
        self.dropped_events = 0

    # -- state the hub reads ----------------------------------------------------------
    @property
    def stalled(self) -> bool:
        since = self._drain_since
        return since is not None and time.monotonic() - since > STALL_SECONDS

    @property
    def approver(self) -> bool:
        return self.role == "console" and not self.closed and not self.stalled

    def close_transport(self) -> None:
        """End the connection; one that does not read is reset (a close would wait on it)."""
        self.closed = True
        if self._drain_since is not None:
            self._writer.transport.abort()
        else:
            self._writer.close()
        self._wake.set()

    # -- producers (sync, constant time) ------------------------------------------------
    def wake(self) -> None:
        """A followed log changed: its output goes out with the next flush."""
        self._output_due = True
        self.hub.soon()

    def push_control(self, line: bytes) -> None:
        if self.closed:
            return
        if len(self._control) >= MAX_CONTROL:
            _log.warning("live console %s reads nothing; closing its connection", self.client)
            self._writer.transport.abort()
            self.close_transport()
            return
        self._control.append(line)
        self._wake.set()

    def push_event(self, line: bytes) -> None:
        """Queue an event line (the caller asks the hub for a flush)."""
        if self.closed:
            return
        if len(self._events) >= MAX_EVENTS:
            self.dropped_events += len(self._events) + 1
            self._events.clear()
            self._sent_generation = -1  # one fresh snapshot instead
        else:
            self._events.append(line)

    def flush(self) -> None:
        """The hub's periodic flush: write what is due directly when nothing else is in
        flight, else hand it to the writer task."""
        if self.closed:
            return
        snapshot_due = self._sent_generation != self.hub.generation
        if not (snapshot_due or self._events or self._output_due):
            return
        transport = self._writer.transport
        if (
            self._writing
            or self._wake.is_set()
            or self._control
            or self._output_due
            or self._sent_generation < 0
            or transport.is_closing()
            or transport.get_write_buffer_size()
        ):
            self._wake.set()
            return
        lines = self._take()
        if lines:  # the socket keeps up (nothing buffered): no drain needed
            self._writer.write(b"".join(lines))

    # -- the connection's life ----------------------------------------------------------
    async def run(self) -> None:
        writer_task = asyncio.get_running_loop().create_task(self._write_loop())
        try:
            await self._read_loop()
        finally:
            self.closed = True
            writer_task.cancel()
            with contextlib.suppress(BaseException):
                await writer_task
            for log, _ in self._follows.values():
                log.followers.discard(self.wake)
                self.hub.release_log(log)
            self._follows.clear()

    async def _read_loop(self) -> None:
        while not self.closed:
            try:
                line = await self._reader.readline()
            except (ConnectionError, OSError, ValueError):  # reset, or a line past the limit
                return
            if not line:
                return
            try:
                message = json.loads(line)
            except (ValueError, RecursionError):
                continue
            if not isinstance(message, dict):
                continue
            await self._handle(message)

    async def _handle(self, message: Mapping[str, object]) -> None:
        kind = message.get("type")
        request_id = message.get("id")
        if kind not in CLIENT_TYPES:
            if request_id is not None:
                self._reply(request_id, ActionResult(False, f"unknown message type {kind!r}"))
            return
        if kind == FOLLOW:
            self._reply(request_id, self._follow(message))
        elif kind == UNFOLLOW:
            self._reply(request_id, self._unfollow(message))
        else:
            # An act may take seconds (a stop waits for the group): run it aside, so the
            # reader keeps taking answers meanwhile.
            task = asyncio.get_running_loop().create_task(self._act(request_id, message))
            self.hub.keep(task)

    async def _act(self, request_id: object, message: Mapping[str, object]) -> None:
        try:
            result = await self.hub.act(self, message)
        except Exception as exc:
            _log.exception("live act failed")
            result = ActionResult(False, f"internal error: {type(exc).__name__}")
        self._reply(request_id, result)

    def _reply(self, request_id: object, result: ActionResult) -> None:
        self.push_control(encode_line(reply_message(request_id, result)))

    def _follow(self, message: Mapping[str, object]) -> ActionResult:
        work_id = message.get("work_id")
        offset = message.get("offset", 0)
        if not isinstance(work_id, str):
            return ActionResult(False, "follow needs work_id (a string)")
        if isinstance(offset, bool) or not isinstance(offset, int) or offset < 0:
            return ActionResult(False, "offset must be a non-negative integer")
        if work_id in self._follows:
            return ActionResult(False, f"{work_id} is already followed on this connection")
        log = self.hub.log_for(work_id)
        if log is None:
            return ActionResult(False, f"unknown work {work_id}; take ids from the snapshot")
        log.followers.add(self.wake)
        self._follows[work_id] = (log, offset)
        self._output_due = True  # read with the reply (which wakes the writer)
        return ActionResult(True, f"following {work_id} from {offset}")

    def _unfollow(self, message: Mapping[str, object]) -> ActionResult:
        work_id = message.get("work_id")
        follow = self._follows.pop(work_id, None) if isinstance(work_id, str) else None
        if follow is None:
            return ActionResult(False, f"{work_id} is not followed on this connection")
        follow[0].followers.discard(self.wake)
        self.hub.release_log(follow[0])
        return ActionResult(True, f"stopped following {work_id}")

    # -- the writer ---------------------------------------------------------------------
    def _take(self) -> list[bytes]:
        """What is due now, in order: replies and approvals (after the first snapshot),
        a snapshot when this connection's is behind the hub's, then events."""
        lines: list[bytes] = []
        if self._sent_generation != self.hub.generation:
            generation, line = self.hub.snapshot_line()
            if generation != self._sent_generation:
                lines.append(line)
                self._sent_generation = generation
            if generation != self.hub.generation:
                self.hub.soon()  # the fresh one comes with a later flush
        if self._sent_generation >= 0:
            lines.extend(self._control)
            self._control.clear()
        lines.extend(self._events)
        self._events.clear()
        return lines

    async def _output(self) -> list[bytes]:
        """One chunk from each followed work that has one (followed works take turns)."""
        lines: list[bytes] = []
        for work_id, (log, offset) in list(self._follows.items()):
            start, data = await log.read(offset, MAX_OUTPUT_CHUNK)
            if self._follows.get(work_id, (None,))[0] is not log:
                continue  # unfollowed while reading back
            end = start + len(data)
            ended = log.ended and log.ready and end >= log.total
            if not data and not ended:
                continue
            del self._follows[work_id]  # to the back: followed works take turns
            if ended:
                log.followers.discard(self.wake)
                self.hub.release_log(log)
            else:
                self._follows[work_id] = (log, end)
            lines.append(encode_line(output_message(OutputChunk(work_id, start, data, ended))))
        return lines

    async def _write_loop(self) -> None:
        writer = self._writer
        try:
            while True:
                await self._wake.wait()
                self._wake.clear()
                self._writing = True
                while True:
                    lines = self._take()
                    if self._output_due:
                        self._output_due = False
                        output = await self._output() if self._follows else []
                        if output:
                            self._output_due = True  # more may follow: read again
                            lines += output
                    if not lines:
                        break
                    writer.write(b"".join(lines))
                    self._drain_since = time.monotonic()
                    await writer.drain()
                    self._drain_since = None
                self._writing = False
        except (ConnectionError, OSError):
            self.closed = True
            self._writer.close()
        except Exception:  # a bug here must end the connection, not leave it silent
            _log.exception("live connection writer failed")
            self.close_transport()
