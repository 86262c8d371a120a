"""One shell job: a command spawned once in its own process group, with pipes, never a TTY.

A job is *settled* only when all three hold: the leader exited, every process of its group is
gone, and both output streams reached EOF. A grandchild that keeps an inherited pipe open, or
a background child that redirected its output elsewhere, keeps the job running.

Output is read in chunks straight from non-blocking pipe fds, decoded incrementally (UTF-8,
invalid bytes replaced) and handed to the stream's capture *before* the rolling preview
bounds it. A stream that turns bulk is drained by a pump thread (`pump.py`) and goes back to
the loop's reader when it is quiet. When a capture's file writer falls behind, the job stops
reading that pipe (the child then blocks on a full pipe), so memory stays bounded whatever
the output size.
"""

from __future__ import annotations

import asyncio
import codecs
import contextlib
import fcntl
import os
import signal
from collections import deque
from collections.abc import Callable, Coroutine, Mapping
from pathlib import Path
from typing import Literal

from pct_runtime.capabilities.shell.pump import READ_SIZE, Pump, PumpEnd
from pct_runtime.capabilities.shell.resolve import ShellConfig
from pct_runtime.host.system.lifeline import lifeline, protect_child
from pct_runtime.host.system.procs import group_alive
from pct_runtime.host.system.sandbox import Sandbox
from pct_runtime.host.system.sandbox.spawn import SpawnedProcess, spawn_process
from pct_runtime.output import Capture, PreviewRead, RollingPreview

WRITE_SIZE = 64 * 1024
# Output pipes are grown to this size (Linux's unprivileged ceiling by default): a busy
# producer then fills one read of up to READ_SIZE instead of 16 reads of the default 64 KiB,
# so the event loop wakes, decodes and hands over output a sixteenth as often.
PIPE_SIZE = 1024 * 1024
# A read this big means a bulk writer is streaming: the pipe is then handed to a pump thread
# (`pump.py`), which drains it while the loop works, and takes it back once output goes quiet.
# Interactive output is smaller and stays on the loop's reader.
BULK_READ = 64 * 1024

InputDelivery = Literal["written", "unknown"]


def _grow_pipe(fd: int) -> None:
    """Ask for a PIPE_SIZE buffer; the default stays where the system refuses (or on macOS)."""
    set_size = getattr(fcntl, "F_SETPIPE_SZ", None)
    if set_size is not None:
        with contextlib.suppress(OSError):
            fcntl.fcntl(fd, set_size, PIPE_SIZE)


class StdinWrite:
    """One submitted stdin write: its bytes, how many reached the pipe, and its outcome."""

    __slots__ = ("close", "data", "done", "written")

    def __init__(self, data: bytes, close: bool, done: asyncio.Future[InputDelivery]) -> None:
        self.data = memoryview(data)
        self.close = close
        self.done = done
        self.written = 0

    @property
    def delivery(self) -> InputDelivery | None:
        """`written`/`unknown` once settled; None while bytes are still queued."""
        return self.done.result() if self.done.done() else None

    def finish(self, delivery: InputDelivery) -> None:
        if not self.done.done():
            self.done.set_result(delivery)


class _Stream:
    def __init__(self, label: str, fd: int, capture: Capture, preview_limit: int) -> None:
        self.label = label
        self.fd: int | None = fd
        self.capture = capture
        self.preview = RollingPreview(preview_limit)
        self.decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self.eof = False
        self.paused = False  # the capture is full: reading waits for its writer
        self.pump: Pump | None = None  # bulk output: a thread owns the fd and drains it
        self.lost_before = False  # some earlier read of this stream lost preview text


class ShellJob:
    """The process side of one shell session. The manager owns policy; this owns mechanics."""

    def __init__(
        self,
        session_id: str,
        stdout: Capture,
        stderr: Capture,
        *,
        preview_limit: int,
        settle_interval: float,
        kill_grace: float,
        confirm_window: float,
        clock: Callable[[], float],
    ) -> None:
        self.id = session_id
        self._captures = (stdout, stderr)
        self._preview_limit = preview_limit
        self._settle_interval = settle_interval
        self._kill_grace = kill_grace
        self._confirm_window = confirm_window
        self._clock = clock
        self.streams: list[_Stream] = []
        self.pgid = 0
        self.returncode: int | None = None
        self.leader_exited = False
        self.group_gone = False
        self.settled = asyncio.Event()
        self.settled_at: float | None = None
        self._news = asyncio.Event()
        self.stop_requested = False
        #: Who stopped it when not the model (`console`, `live_console`); the first stop wins.
        self.stopped_by: str | None = None
        self.unknown_outcome = False
        self.delivered = False
        #: (state, reason, path) of each stream's recovery line as last shown to the model.
        self.recovery_told: dict[str, tuple[str, str | None, str | None]] = {}
        self.reserved_by: object | None = None
        self.observe_lock = asyncio.Lock()
        self.stdin_transport = False
        self._stdin_fd: int | None = None
        self._stdin_queue: deque[StdinWrite] = deque()
        self._stdin_watched = False
        #: Writes whose call answered before they settled; the next reports tell their end.
        self.stdin_backlog: list[StdinWrite] = []
        self.stdin_closed = False
        self.stdin_broken = False
        self.stdin_pending_bytes = 0
        self.stdin_pending_calls = 0
        #: Bytes a person typed into stdin from a console since the model's last read, and
        #: from where (`console`, `live_console`): the model is told the count, never them.
        self.operator_typed = 0
        self.typed_by: str | None = None
        self.ever_output = False
        self._tasks: set[asyncio.Task[object]] = set()
        self._stop_task: asyncio.Task[bool] | None = None
        self._probing = False
        self._output_listeners: list[Callable[[str, str], None]] = []
        #: The command line it runs (for viewers; set at spawn).
        self.command = ""

    # -- observers -----------------------------------------------------------------------
    def add_output_listener(self, listener: Callable[[str, str], None]) -> Callable[[], None]:
        """Call `listener(stream_label, text)` with every decoded chunk as it is captured.

        For viewers (the console): listeners see a copy of the output and never consume the
        model's preview. A failing listener is dropped. Returns a function that removes it.
        """
        self._output_listeners.append(listener)

        def remove() -> None:
            if listener in self._output_listeners:
                self._output_listeners.remove(listener)

        return remove

    def _tell(self, label: str, data: bytes) -> None:
        if not self._output_listeners:
            return
        text = data.decode("utf-8", errors="replace")
        for listener in list(self._output_listeners):
            try:
                listener(label, text)
            except Exception:
                self._output_listeners.remove(listener)

    # -- spawn ---------------------------------------------------------------------------
    async def spawn(
        self,
        shell: ShellConfig,
        command: str,
        cwd: Path,
        env: Mapping[str, str],
        *,
        sandbox: Sandbox | None = None,
    ) -> None:
        """Launch exactly once. Raises OSError (the manager reports `spawn-failed`)."""
        self.command = command
        r0, w0 = os.pipe()
        r1, w1 = os.pipe()
        r2, w2 = os.pipe()
        for fd in (r1, r2):
            _grow_pipe(fd)
        argv = [shell.path, *shell.args]
        if not shell.stdin_transport:
            argv.append(command)
        try:
            proc = await spawn_process(
                sandbox,
                argv,
                stdin=r0,
                stdout=w1,
                stderr=w2,
                cwd=str(cwd),
                env=protect_child(env),
                start_new_session=True,
            )
        except BaseException:
            for fd in (w0, r1, r2):
                os.close(fd)
            raise
        finally:
            for fd in (r0, w1, w2):
                os.close(fd)
        self.pgid = proc.pid
        lifeline().watch(self.pgid)
        loop = asyncio.get_running_loop()
        for fd in (w0, r1, r2):
            os.set_blocking(fd, False)
        self._stdin_fd = w0
        self.streams = [
            _Stream("stdout", r1, self._captures[0], self._preview_limit),
            _Stream("stderr", r2, self._captures[1], self._preview_limit),
        ]
        for stream in self.streams:
            loop.add_reader(stream.fd, self._on_readable, stream)  # type: ignore[arg-type]
        self._spawn_task(self._wait_leader(proc))
        if shell.stdin_transport:
            self.stdin_transport = True
            self.submit_input(command.encode("utf-8") + b"\n", close=True)

    def _spawn_task(self, coro: Coroutine[object, None, object]) -> None:
        task: asyncio.Task[object] = asyncio.get_running_loop().create_task(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _wait_leader(self, proc: SpawnedProcess) -> None:
        self.returncode = await proc.wait()
        self.leader_exited = True
        self._news.set()
        self._check_settled()

    # -- output --------------------------------------------------------------------------
    def _on_readable(self, stream: _Stream) -> None:
        fd = stream.fd
        if fd is None:
            return
        try:
            data = os.read(fd, READ_SIZE)
        except (BlockingIOError, InterruptedError):
            return
        except OSError:
            self._end_stream(stream, source_error=True)
            return
        if not data:
            self._end_stream(stream)
            return
        self._take(stream, data)
        if stream.capture.blocked:
            self._pause(stream)
        elif len(data) >= BULK_READ:
            self._start_pump(stream, fd)

    def _take(self, stream: _Stream, data: bytes) -> None:
        """What every read of a stream's pipe goes through, the loop's own or a pump's."""
        if data.isascii() and not stream.decoder.getstate()[0]:
            encoded = data
        else:
            encoded = stream.decoder.decode(data).encode("utf-8")
        if encoded:
            stream.capture.append(encoded)
            stream.preview.append(encoded)
            self.ever_output = True
            self._news.set()
            self._tell(stream.label, encoded)

    def _start_pump(self, stream: _Stream, fd: int) -> None:
        loop = asyncio.get_running_loop()
        try:
            pump = Pump(fd, loop, lambda data, end: self._pumped(stream, pump, data, end))
        except OSError:  # no fd for its wake pipe: the loop keeps reading, only slower
            return
        loop.remove_reader(fd)
        stream.pump = pump
        try:
            pump.start()
        except RuntimeError:  # no thread to be had: back to the loop's reader
            stream.pump = None
            pump.join()
            loop.add_reader(fd, self._on_readable, stream)

    def _pumped(self, stream: _Stream, pump: Pump, data: bytes, end: PumpEnd | None) -> None:
        if stream.pump is not pump:
            return  # posted before the pump was halted: the stream has moved on
        if data:
            self._take(stream, data)
        if end is None:
            if stream.capture.blocked:
                self._pause(stream)  # the credit comes back when the writer catches up
            else:
                pump.grant()
            return
        stream.pump = None
        pump.join()
        if end == "eof":
            self._end_stream(stream)
        elif end == "error":
            self._end_stream(stream, source_error=True)
        elif stream.capture.blocked:
            self._pause(stream)
        elif not stream.paused and stream.fd is not None:
            asyncio.get_running_loop().add_reader(stream.fd, self._on_readable, stream)

    def _halt_pump(self, stream: _Stream) -> None:
        pump, stream.pump = stream.pump, None
        if pump is not None:
            pump.halt()

    def _pause(self, stream: _Stream) -> None:
        if stream.paused or stream.fd is None:
            return
        stream.paused = True
        if stream.pump is None:
            asyncio.get_running_loop().remove_reader(stream.fd)
        self._spawn_task(self._resume_when_ready(stream))

    async def _resume_when_ready(self, stream: _Stream) -> None:
        await stream.capture.ready()
        stream.paused = False
        if stream.pump is not None:
            stream.pump.grant()
        elif stream.fd is not None and not stream.eof:
            asyncio.get_running_loop().add_reader(stream.fd, self._on_readable, stream)

    def _end_stream(self, stream: _Stream, *, source_error: bool = False) -> None:
        if stream.eof:
            return
        stream.eof = True
        pumped = stream.pump is not None
        self._halt_pump(stream)
        fd, stream.fd = stream.fd, None
        if fd is not None:
            if not pumped:
                asyncio.get_running_loop().remove_reader(fd)
            os.close(fd)
        tail = stream.decoder.decode(b"", final=True).encode("utf-8")
        if tail:
            stream.capture.append(tail)
            stream.preview.append(tail)
            self.ever_output = True
            self._tell(stream.label, tail)
        stream.capture.finish(source_error=source_error)
        self._news.set()
        self._check_settled()

    def has_unread(self) -> bool:
        return any(s.preview.pending or s.preview.dropped for s in self.streams)

    def read_preview(self, budget: int) -> tuple[PreviewRead, PreviewRead]:
        """Destructive read: stdout first, then stderr with what is left of the budget."""
        out = self.streams[0].preview.read(budget)
        err = self.streams[1].preview.read(budget - len(out.data))
        return out, err

    # -- settlement ----------------------------------------------------------------------
    def _check_settled(self) -> None:
        if self.settled.is_set() or not self.leader_exited:
            return
        if not all(s.eof for s in self.streams):
            return
        if self.group_gone or not group_alive(self.pgid):
            self._settle()
        elif not self._probing:
            self._probing = True
            self._spawn_task(self._probe_group())

    async def _probe_group(self) -> None:
        # Starts at the settle interval (50 ms) and backs off to 1 s: a long-lived background
        # member (a dev server started with `&`) must not cost a /proc scan every 50 ms.
        interval = self._settle_interval
        try:
            while not self.settled.is_set():
                await asyncio.sleep(interval)
                if not group_alive(self.pgid):
                    self._settle()
                interval = min(interval * 1.5, max(self._settle_interval, 1.0))
        finally:
            self._probing = False

    def _settle(self) -> None:
        self.group_gone = True
        lifeline().forget(self.pgid)
        if self.settled.is_set():
            return
        self.settled_at = self._clock()
        self.unknown_outcome = False
        self._close_stdin()
        self.settled.set()
        self._news.set()

    async def wait_for_news(self, wait_s: float, settle_window: float) -> None:
        """Wait for new output or settlement (not a deadline); then briefly for settlement."""
        if self.settled.is_set():
            return
        loop = asyncio.get_running_loop()
        deadline = loop.time() + wait_s
        while not self.settled.is_set() and not self.has_unread():
            remaining = deadline - loop.time()
            if remaining <= 0:
                return
            self._news.clear()
            try:
                async with asyncio.timeout(remaining):  # no extra task, unlike wait_for
                    await self._news.wait()
            except TimeoutError:
                return
        remaining = min(settle_window, deadline - loop.time())
        if not self.settled.is_set() and remaining > 0:
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(remaining):
                    await self.settled.wait()

    # -- stop ----------------------------------------------------------------------------
    def request_stop(self, *, by: str | None = None) -> asyncio.Task[bool]:
        """SIGTERM the group, SIGKILL after the grace, then confirm. Concurrent callers share it.

        `by` names a console that stopped it for a person (the model's result says so)."""
        if not self.settled.is_set():
            if not self.stop_requested:
                self.stopped_by = by
            self.stop_requested = True  # a job that already finished stays `completed`
        if self._stop_task is None or self._stop_task.done():
            self._stop_task = asyncio.get_running_loop().create_task(self._stop())
        return self._stop_task

    @property
    def stopping(self) -> bool:
        """A stop is signalling or waiting for its confirmation right now."""
        return self._stop_task is not None and not self._stop_task.done()

    def _signal(self, sig: int) -> None:
        if self.group_gone or not self.pgid:
            return
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.pgid, sig)

    async def _wait_settled(self, within: float) -> bool:
        """During a stop, probe the group at the settle interval (the idle probe backs off)."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + within
        while not self.settled.is_set():
            remaining = deadline - loop.time()
            if remaining <= 0:
                return False
            try:
                async with asyncio.timeout(min(remaining, self._settle_interval)):
                    await self.settled.wait()
            except TimeoutError:
                if (
                    self.leader_exited
                    and all(s.eof for s in self.streams)
                    and not group_alive(self.pgid)
                ):
                    self._settle()
        return True

    async def _stop(self) -> bool:
        if self.settled.is_set():
            return True
        self.unknown_outcome = False
        self._signal(signal.SIGTERM)
        if await self._wait_settled(self._kill_grace):
            return True
        self._signal(signal.SIGKILL)
        if await self._wait_settled(self._confirm_window):
            return True
        if self.leader_exited and not group_alive(self.pgid):
            # The group is confirmed gone; only processes that escaped it still hold our pipes.
            self.group_gone = True
            for stream in self.streams:
                self._end_stream(stream)
            return self.settled.is_set()
        self.unknown_outcome = True
        return False

    # -- stdin ---------------------------------------------------------------------------
    @property
    def stdin_open(self) -> bool:
        return self._stdin_fd is not None

    @property
    def stdin_closing(self) -> bool:
        """stdin is closed, or a queued write will close it once its last byte is out."""
        return self.stdin_closed or any(w.close for w in self._stdin_queue)

    def _close_stdin(self) -> None:
        fd, self._stdin_fd = self._stdin_fd, None
        self.stdin_closed = True
        queued, self._stdin_queue = self._stdin_queue, deque()
        for write in queued:
            write.finish("unknown" if write.written < len(write.data) else "written")
        if fd is not None:
            if self._stdin_watched:
                self._stdin_watched = False
                with contextlib.suppress(ValueError, OSError, RuntimeError):
                    asyncio.get_running_loop().remove_writer(fd)
            os.close(fd)

    def submit_input(self, data: bytes, *, close: bool) -> StdinWrite:
        """Queue `data` (then optionally EOF) for delivery; never waits for the reader.

        Bytes go out with non-blocking writes as the pipe drains, driven by the loop, so a
        program that does not read stdin never blocks a caller, a poll or a stop. Writes are
        delivered in submission order. Cancelling the caller does not withdraw a queued write:
        once submitted it is committed and finishes (or fails as `unknown`) in the background.
        """
        write = StdinWrite(data, close, asyncio.get_running_loop().create_future())
        if self._stdin_fd is None:
            write.finish("unknown" if data else "written")
            return write
        self._stdin_queue.append(write)
        self._pump_stdin()
        return write

    def _pump_stdin(self) -> None:
        fd = self._stdin_fd
        if fd is None:
            return
        while self._stdin_queue:
            write = self._stdin_queue[0]
            while write.written < len(write.data):
                end = write.written + WRITE_SIZE
                try:
                    write.written += os.write(fd, write.data[write.written : end])
                except (BlockingIOError, InterruptedError):
                    if not self._stdin_watched:
                        self._stdin_watched = True
                        asyncio.get_running_loop().add_writer(fd, self._pump_stdin)
                    return
                except OSError:
                    self.stdin_broken = True
                    self._close_stdin()  # fails this and every later queued write
                    return
            self._stdin_queue.popleft()
            write.finish("written")
            if write.close:
                self._close_stdin()
                return
        if self._stdin_watched:
            self._stdin_watched = False
            asyncio.get_running_loop().remove_writer(fd)

    def type_for_operator(self, data: bytes, *, by: str) -> StdinWrite | None:
        """A person's keystrokes from a console (a password prompt): queued like the model's
        input, but only their count reaches the model's next read. None when stdin cannot
        take input (closed, closing, or carrying the command)."""
        if self._stdin_fd is None or self.stdin_closing or self.stdin_transport:
            return None
        self.operator_typed += len(data)
        self.typed_by = by
        return self.submit_input(data, close=False)

    def take_operator_typed(self) -> tuple[int, str | None]:
        """What a read tells the model once: how many bytes were typed, and from where."""
        typed, self.operator_typed = self.operator_typed, 0
        return typed, self.typed_by

    async def write_input(self, data: bytes, *, close: bool) -> tuple[InputDelivery, int]:
        """Submit `data` and wait until it is delivered. Returns delivery and bytes written.

        `written` is a transport result, not an application acknowledgement. A broken pipe or
        write error reports `unknown`.
        """
        write = self.submit_input(data, close=close)
        delivery = await asyncio.shield(write.done)
        return delivery, write.written

    # -- teardown ------------------------------------------------------------------------
    def release(self) -> None:
        """Drop everything the loop holds for a settled or abandoned job (fds, readers, tasks)."""
        loop = asyncio.get_running_loop()
        for stream in self.streams:
            if stream.fd is not None and not stream.eof:
                if stream.pump is None:
                    loop.remove_reader(stream.fd)
                self._halt_pump(stream)
                os.close(stream.fd)
                stream.fd = None
                stream.eof = True
                stream.capture.finish(source_error=True)
        self._close_stdin()
        for task in list(self._tasks):
            task.cancel()
