"""A thread that drains one job's output pipe while the output is bulk.

On the event loop a streaming producer is read once per wake-up, and whenever the loop is busy
elsewhere (answering a poll, finishing a capture write) the pipe fills and the producer blocks.
A pump thread sits in `poll` on the pipe instead: when bytes arrive it lets the pipe gather a
batch, takes it in one read, and hands the loop one batch at a time, so the producer keeps
writing while the loop decodes, captures and previews the batch before. The loop does exactly
what it does for a read of its own; the pump never decodes, writes a file or touches job state.

While a pump runs it owns the pipe fd. It gives it back when the pipe has been quiet for
`QUIET_SECONDS` (interactive output is then read by the loop again, with no thread hop), at EOF
or a read error, or when the loop halts it; only then may the loop read or close the fd.
Backpressure is one credit: a batch is posted only after the loop took the one before, and the
loop withholds the credit while the capture's writer is behind, so at most one batch (plus the
pipe) is ever in flight.
"""

from __future__ import annotations

import array
import contextlib
import fcntl
import os
import select
import termios
import threading
import time
from collections.abc import Callable
from typing import Literal, Protocol

READ_SIZE = 1024 * 1024
# Once bytes arrive the pump naps (NAP_SECONDS at a time, asking the pipe how much it holds)
# until the pipe holds GATHER_BYTES or GATHER_SECONDS have passed, then reads it all at once:
# one read and one post per batch, where a woken reader would otherwise read every 4-64 KiB
# producer write. At 1 GB/s the 1 MiB pipe fills in ~1 ms, so the producer is never held up
# for long; a slow stream still reaches the loop GATHER_SECONDS after its first byte.
# Measured over MCP, 200 MB alternated 12 times against gathering several reads and joining
# them: CPU per MB 1.65 -> 1.40 ms, 453 -> 585 MB/s (the minimal peer 582 in the same runs).
GATHER_BYTES = 512 * 1024
GATHER_SECONDS = 0.002
NAP_SECONDS = 0.00025
# This long with no output and the pipe goes back to the loop's reader.
QUIET_SECONDS = 0.05
# How often a pump waiting for credit checks that the loop still exists.
TICK_SECONDS = 0.1

PumpEnd = Literal["quiet", "eof", "error"]
#: Called on the loop with a batch (maybe empty) and, for the pump's last post, why it ended.
Deliver = Callable[[bytes, "PumpEnd | None"], None]


class _Loop(Protocol):
    """The loop methods a pump thread may call (asyncio's loop is thread-safe for these)."""

    def call_soon_threadsafe(self, callback: Callable[..., object], *args: object) -> object: ...

    def is_closed(self) -> bool: ...


class Pump:
    """One pipe's drain thread. Create, `start`, then `grant` after each delivered batch."""

    def __init__(self, fd: int, loop: _Loop, deliver: Deliver) -> None:
        self.fd = fd
        self._loop = loop
        self._deliver = deliver
        self._credit = threading.Event()
        self._credit.set()
        self._halt = threading.Event()
        self._wake_r, self._wake_w = os.pipe()
        self._thread = threading.Thread(target=self._run, name="pct-output-pump", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def grant(self) -> None:
        """The loop took the last batch and the capture admits more: post the next."""
        self._credit.set()

    def halt(self) -> None:
        """Stop now and wait for the thread (under a millisecond: at most one nap).

        Buffered bytes that were not posted are dropped, as unread pipe bytes are when the loop
        closes a pipe. After this the fd is the loop's again; late posts are the caller's to
        ignore."""
        self._halt.set()
        self._credit.set()
        with contextlib.suppress(OSError):
            os.write(self._wake_w, b"x")
        self.join()

    def join(self) -> None:
        """Wait for the thread, which has posted its last batch (or been halted), and free it."""
        if self._thread.ident is not None and self._thread is not threading.current_thread():
            self._thread.join()
        for fd in (self._wake_r, self._wake_w):
            with contextlib.suppress(OSError):
                os.close(fd)
        self._wake_r = self._wake_w = -1

    # -- the thread ----------------------------------------------------------------------
    def _post(self, data: bytes, end: PumpEnd | None) -> bool:
        """Wait for credit, then hand `data` to the loop. False when the pump must stop."""
        if data or end is None:
            while not self._credit.wait(TICK_SECONDS):
                if self._halt.is_set() or self._loop.is_closed():
                    return False
            self._credit.clear()
        if self._halt.is_set():
            return False
        try:
            self._loop.call_soon_threadsafe(self._deliver, data, end)
        except RuntimeError:  # the loop is closed: the process is ending
            return False
        return True

    def _run(self) -> None:
        poller = select.poll()
        poller.register(self.fd, select.POLLIN)
        poller.register(self._wake_r, select.POLLIN)
        quiet_since = time.monotonic()
        while True:
            wait = quiet_since + QUIET_SECONDS - time.monotonic()
            if wait <= 0:
                self._post(b"", "quiet")
                return
            events = poller.poll(int(wait * 1000) + 1)
            if self._halt.is_set():
                return
            ready = [mask for fd, mask in events if fd == self.fd]
            if not ready:
                continue
            if not ready[0] & select.POLLHUP:
                self._gather()  # let the pipe fill, so one read takes a batch
                if self._halt.is_set():
                    return
            try:
                data = os.read(self.fd, READ_SIZE)
            except (BlockingIOError, InterruptedError):
                continue
            except OSError:
                self._post(b"", "error")
                return
            if not data:
                self._post(b"", "eof")
                return
            if not self._post(data, None):
                return
            quiet_since = time.monotonic()

    def _gather(self) -> None:
        """Nap until the pipe holds GATHER_BYTES, for at most GATHER_SECONDS."""
        until = time.monotonic() + GATHER_SECONDS
        held = array.array("i", [0])
        while not self._halt.is_set():
            try:
                fcntl.ioctl(self.fd, termios.FIONREAD, held)
            except OSError:
                return
            if held[0] >= GATHER_BYTES or time.monotonic() >= until:
                return
            time.sleep(NAP_SECONDS)
