"""Host side of the worker processes: the zygote client and one framed channel per cell.

The zygote is started lazily, in its own process group, with stdio detached. Each cell is a
process forked by the zygote; its socket end arrives here over the control channel
(`SCM_RIGHTS`). Closing the control channel makes the zygote kill its whole group, and the
host also kills the group itself, so no worker is left behind.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import re
import signal
import socket
import struct
import subprocess
import sys
from collections import deque
from pathlib import Path

from pct_runtime.capabilities.code.worker import MAX_DEPTH, nested_deeper_than
from pct_runtime.host.system.lifeline import child_setup, lifeline, protect_child
from pct_runtime.host.system.procs import group_alive, pidfd_pid
from pct_runtime.host.system.sandbox import Sandbox
from pct_runtime.host.system.sandbox.spawn import SpawnedPopen
from pct_runtime.host.system.sandbox.spawn import popen as sandboxed_popen
from pct_runtime.jsontypes import JSONObject

WORKER_SCRIPT = Path(__file__).with_name("worker.py")
# Address-space ceiling (RLIMIT_AS) of every cell process: 1 GiB. A program that allocates
# past it gets MemoryError and fails; the host is unaffected.
MEMORY_LIMIT_BYTES = 1024 * 1024 * 1024
# Largest JSON payload (nested-call arguments or reply) one frame may carry: 256 KiB.
PAYLOAD_BYTES = 256 * 1024
# Largest frame a cell may send: a full payload plus envelope slack. The worker never
# writes more (larger arguments travel as a `big` size, text in 8,192-character chunks).
MAX_FRAME_BYTES = PAYLOAD_BYTES + 16 * 1024
# A `\uD800`-`\uDFFF` escape: JSON allows it, but a lone one is no Unicode text.
_SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89a-fA-F]")
_SURROGATE = re.compile("[\ud800-\udfff]")
_CHANNEL_HINT = (
    "Use print(), text(), tools.* and the last expression instead of writing to Code Mode's "
    "channel."
)
_HEADER = struct.Struct("!I")
_START_TIMEOUT = 10.0
# Idle, never-used cell processes kept ready (each serves exactly one cell, then exits).
SPARE_WORKERS = 2


class WorkerStartError(RuntimeError):
    """A cell process could not be created (zygote start or fork failed)."""


class FrameError(RuntimeError):
    """A cell sent a frame that breaks the protocol (too large, too deep, not a JSON
    object). The message is model-facing: it becomes the failed cell's error."""


class Zygote:
    """One idle, preloaded Python process that forks a fresh process per cell."""

    def __init__(
        self,
        memory_limit: int = MEMORY_LIMIT_BYTES,
        spares: int = SPARE_WORKERS,
        *,
        sandbox: Sandbox | None = None,
    ):
        self._memory_limit = memory_limit
        self._sandbox = sandbox
        self._proc: SpawnedPopen | None = None
        self._ctrl: socket.socket | None = None
        self._lock = asyncio.Lock()
        self._ready = False
        self._spare_target = spares
        self._spares: deque[tuple[int, socket.socket]] = deque()
        self._refill: asyncio.Task[None] | None = None
        self._closed = False

    @property
    def spare_pids(self) -> list[int]:
        return [pid for pid, _ in self._spares]

    async def acquire(self) -> tuple[int, socket.socket]:
        """A clean cell process: a pre-forked spare when one is ready, else a fresh fork.

        A spare has never run anything and is handed out once. Replacements are created by
        `fill_soon()`, which the manager calls once a call has been answered, so forking a
        spare never competes with the cell that is running.
        """
        while self._spares:
            pid, sock = self._spares.popleft()
            if _socket_open(sock):
                return pid, sock
            sock.close()
        task = asyncio.ensure_future(self.fork())
        try:
            return await asyncio.shield(task)
        except asyncio.CancelledError:
            # The fork request is already on its way: keep the answer as a spare so the
            # control channel stays in step and no process is orphaned.
            task.add_done_callback(self._keep_as_spare)
            raise

    def _keep_as_spare(self, task: asyncio.Task[tuple[int, socket.socket]]) -> None:
        if task.cancelled() or task.exception() is not None:
            return
        pid, sock = task.result()
        if self._closed:
            sock.close()
        else:
            self._spares.append((pid, sock))

    def fill_soon(self) -> None:
        """Start creating spares in the background."""
        self._schedule_refill()

    def _schedule_refill(self) -> None:
        if self._spare_target <= 0 or self._closed:
            return
        if self._refill is None or self._refill.done():
            self._refill = asyncio.get_running_loop().create_task(self._fill())

    async def _fill(self) -> None:
        with contextlib.suppress(WorkerStartError, OSError):
            while len(self._spares) < self._spare_target and not self._closed:
                spare = await self.fork()
                if self._closed:
                    spare[1].close()
                    return
                self._spares.append(spare)

    @property
    def pid(self) -> int | None:
        return self._proc.pid if self._proc is not None else None

    def _alive(self) -> bool:
        return self._proc is not None and self._proc.poll() is None and self._ctrl is not None

    def _spawn(self) -> None:
        parent, child = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            argv = [
                sys.executable,
                "-I",
                "-S",
                str(WORKER_SCRIPT),
                "zygote",
                str(child.fileno()),
                str(self._memory_limit),
            ]
            # Under --sandbox the zygote starts confined, so every cell it forks is too.
            self._proc = sandboxed_popen(
                self._sandbox,
                argv,
                pass_fds=[child.fileno()],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                env=protect_child(os.environ),
                start_new_session=True,
                preexec_fn=child_setup(),
            )
        except OSError as exc:
            parent.close()
            raise WorkerStartError(f"could not start the worker process: {exc}") from exc
        finally:
            child.close()
        lifeline().watch(self._proc.pid)
        parent.setblocking(False)
        self._ctrl = parent
        self._ready = False

    async def _recv(self, bufsize: int) -> tuple[bytes, list[int]]:
        assert self._ctrl is not None
        ctrl = self._ctrl
        loop = asyncio.get_running_loop()
        while True:
            try:
                msg, fds, _flags, _addr = socket.recv_fds(ctrl, bufsize, 1)
                return msg, fds
            except (BlockingIOError, InterruptedError):
                pass
            fut: asyncio.Future[None] = loop.create_future()
            loop.add_reader(ctrl.fileno(), _wake, fut)
            try:
                await asyncio.wait_for(fut, _START_TIMEOUT)
            except TimeoutError:
                raise WorkerStartError("the worker process did not respond") from None
            finally:
                loop.remove_reader(ctrl.fileno())

    async def start(self) -> None:
        """Start (or restart) the zygote and wait until it has preloaded."""
        async with self._lock:
            await self._ensure()

    async def _ensure(self) -> None:
        if self._alive() and self._ready:
            return
        await self._kill()
        self._spawn()
        msg, fds = await self._recv(1)
        for fd in fds:
            os.close(fd)
        if msg != b"R":
            await self._kill()
            raise WorkerStartError("the worker process exited during start-up")
        self._ready = True

    async def fork(self) -> tuple[int, socket.socket]:
        """A fresh cell process and the host end of its socket."""
        async with self._lock:
            await self._ensure()
            assert self._ctrl is not None
            try:
                self._ctrl.send(b"F")
                msg, fds = await self._recv(4)
            except (OSError, WorkerStartError) as exc:
                await self._kill()
                raise WorkerStartError(f"could not create a cell process: {exc}") from exc
            if len(msg) != 4 or not fds:
                for fd in fds:
                    os.close(fd)
                if not msg:
                    await self._kill()
                raise WorkerStartError("the worker process could not fork a cell")
            (pid,) = _HEADER.unpack(msg)
            if len(fds) > 1:
                # The cell's pidfd: inside a sandbox's PID namespace the zygote's number
                # for it is not ours, so the pid to signal is read from the pidfd.
                with contextlib.suppress(OSError):
                    pid = pidfd_pid(fds[1])
            for extra in fds[1:]:
                os.close(extra)
            return pid, socket.socket(fileno=fds[0])

    async def _kill(self) -> None:
        while self._spares:
            self._spares.popleft()[1].close()
        ctrl, self._ctrl = self._ctrl, None
        proc, self._proc = self._proc, None
        self._ready = False
        if ctrl is not None:
            ctrl.close()
        if proc is None:
            return
        if proc.poll() is None:
            # Closing the control channel already makes the zygote kill its group; do it
            # here too, in case the zygote is stuck.
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(proc.pid, signal.SIGKILL)
        await asyncio.to_thread(_reap, proc)
        lifeline().forget(proc.pid)

    async def close(self) -> None:
        self._closed = True
        refill, self._refill = self._refill, None
        if refill is not None and not refill.done():
            refill.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await refill
        async with self._lock:
            await self._kill()


def _socket_open(sock: socket.socket) -> bool:
    """False once the peer (a spare cell process) has gone away."""
    try:
        return sock.recv(1, socket.MSG_PEEK | socket.MSG_DONTWAIT) != b""
    except BlockingIOError:
        return True
    except OSError:
        return False


def _wake(fut: asyncio.Future[None]) -> None:
    if not fut.done():
        fut.set_result(None)


def _reap(proc: SpawnedPopen) -> None:
    try:
        proc.wait(timeout=5)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            proc.kill()
        proc.wait()


def encode_json(value: object) -> bytes:
    """`value` exactly as a frame body carries it (compact JSON, UTF-8): payload bounds are
    measured on these bytes, so a size check and the frame sent can never disagree."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode("utf-8", "replace")


def decode_frame(body: bytes) -> JSONObject:
    """One frame body as a JSON object, or `FrameError`.

    Depth is checked before parsing, so a frame nested 100,000 deep is refused without a
    RecursionError. Lone surrogates (from escapes) become U+FFFD: they are no text, and
    every later encode of them (captures, MCP) would fail.
    """
    if nested_deeper_than(body, MAX_DEPTH):
        raise FrameError(
            f"The cell wrote a frame nested deeper than {MAX_DEPTH} levels; Code Mode stopped "
            "it. Return flatter data."
        )
    try:
        value = json.loads(body.decode("utf-8"))
    except (ValueError, RecursionError) as exc:  # UnicodeDecodeError is a ValueError
        raise FrameError(
            f"The cell wrote a frame that is not UTF-8 JSON ({exc}); Code Mode stopped it. "
            f"{_CHANNEL_HINT}"
        ) from None
    if not isinstance(value, dict):
        raise FrameError(
            f"The cell wrote a frame that is not a JSON object; Code Mode stopped it. "
            f"{_CHANNEL_HINT}"
        )
    if _SURROGATE_ESCAPE.search(body):
        cleaned = _without_surrogates(value)
        assert isinstance(cleaned, dict)
        return cleaned
    return value


def _without_surrogates(value: object) -> object:
    """`value` with every lone surrogate in its strings and keys replaced by U+FFFD (its
    depth is already bounded by `MAX_DEPTH`)."""
    if isinstance(value, str):
        return _SURROGATE.sub("\ufffd", value)
    if isinstance(value, list):
        return [_without_surrogates(item) for item in value]
    if isinstance(value, dict):
        return {_SURROGATE.sub("\ufffd", k): _without_surrogates(v) for k, v in value.items()}
    return value


class CellChannel:
    """The framed JSON channel to one cell process."""

    def __init__(self, pid: int, reader: asyncio.StreamReader, writer: asyncio.StreamWriter):
        self.pid = pid
        self._reader = reader
        self._writer = writer
        self.eof = asyncio.Event()

    @classmethod
    async def open(cls, pid: int, sock: socket.socket) -> CellChannel:
        reader, writer = await asyncio.open_unix_connection(sock=sock, limit=MAX_FRAME_BYTES + 8)
        return cls(pid, reader, writer)

    def send(self, obj: JSONObject) -> None:
        """Queue one frame; never blocks (asyncio buffers, cell replies are bounded)."""
        if self._writer.is_closing():
            return
        data = encode_json(obj)
        self._writer.write(_HEADER.pack(len(data)) + data)

    async def recv(self) -> JSONObject | None:
        """The next frame, or None at end of stream (the cell process is gone).

        Raises `FrameError` for a frame no honest worker writes; the stream is then out of
        step, so the caller stops the cell."""
        try:
            header = await self._reader.readexactly(4)
        except (asyncio.IncompleteReadError, ConnectionError):
            self.eof.set()
            return None
        (size,) = _HEADER.unpack(header)
        if size > MAX_FRAME_BYTES:
            raise FrameError(
                f"The cell wrote a frame of {size} bytes, above the {MAX_FRAME_BYTES}-byte "
                f"limit; Code Mode stopped it. {_CHANNEL_HINT}"
            )
        try:
            body = await self._reader.readexactly(size)
        except (asyncio.IncompleteReadError, ConnectionError):
            self.eof.set()
            return None
        return decode_frame(body)

    def kill(self) -> None:
        """SIGKILL the cell's process group (the cell and whatever it started).

        The zygote makes every cell the leader of its own group, so this reaches processes
        a program spawned through an allowed module's internals. Only while the socket is
        open, or while the group still has members: either way its id cannot have been
        handed to another process.
        """
        if self.eof.is_set() and not group_alive(self.pid):
            return
        try:
            os.killpg(self.pid, signal.SIGKILL)
        except ProcessLookupError:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(self.pid, signal.SIGKILL)  # not (yet) a group leader
        except PermissionError:
            pass

    def close(self) -> None:
        with contextlib.suppress(Exception):
            self._writer.close()
