"""Capture of decoded execution output, and the private recovery files behind it.

One `OutputOwner` exists per runtime session and is shared by Shell Sessions and Code Mode.
Each producer stream (a shell job's stdout, a cell's emitted text, ...) opens a `Capture`.
Capture sees every decoded byte *before* any destructive preview limit applies, so text a
preview dropped or a read omitted can still be recovered from a file.

Files are created only when needed — a yield that must publish a stable path, a spill past
the in-memory prefix, or a terminal read that lost preview text. They are exclusive (`O_EXCL`),
private (0600) `<uuid>.txt` files in one lazily created `pct-output-<pid>-<start ticks>-*`
folder (0700) under the capture root (`pct_runtime.output.root`: the user's runtime temp dir,
out of every job's writable roots). The folder is created and held as a descriptor relative to
the root's, and every file is created, checked and unlinked relative to the folder's, so a job
that renames or swaps a path can never make pct write or delete outside its own folder. Files
outlive handle pruning and are removed by `OutputOwner.close()` at session end,
identity-checked and non-recursively — or, when the process died without cleanup, by its
lifeline watchdog or the next start-up's sweep.

Writes happen in worker threads so the event loop never blocks on disk; a producer must
respect `Capture.blocked` (at most 16 pending chunks and max(2 × prefix, 64 KiB) pending
bytes) and wait on `Capture.ready()`. Shell pauses its pipes; Code Mode holds its producer
credit. Appending while blocked loses text and marks the capture `partial` (`overload`).
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import os
import secrets
import stat
import threading
import uuid
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, TypeVar

from pct_runtime.host.system.procs import process_tag
from pct_runtime.jsontypes import JSONObject
from pct_runtime.output.root import (
    DIR_FLAGS,
    OPEN_CLOEXEC,
    OPEN_NOFOLLOW,
    CaptureRoot,
    open_given_root,
    process_capture_root,
)

RecoveryState = Literal["capturing", "complete", "partial", "unavailable"]
RecoveryReason = Literal[
    "io-error", "io-timeout", "overload", "source-error", "missing", "owner-closed"
]

DEFAULT_PREFIX_BYTES = 256 * 1024
MAX_PENDING_CHUNKS = 16
# The admission window holds a few of a shell job's largest reads (1 MiB): with less, every
# read blocks the producer until the writer catches up (stop and go, not a pipeline), which
# halves throughput on a busy machine. Memory stays bounded by the window.
MIN_PENDING_BYTES = 4 * 1024 * 1024
IO_TIMEOUT_SECONDS = 5.0
COALESCE_BYTES = 128 * 1024
IOV_BATCH = 64  # chunks per writev call; far below every IOV_MAX
DIR_PREFIX = "pct-output-"

_T = TypeVar("_T")


@dataclass(frozen=True)
class RecoveryRecord:
    """A snapshot of one capture: what was committed, what is confirmed, and where it is.

    `bytes` counts UTF-8 bytes committed by the producer; `captured_bytes` counts bytes
    confirmed in memory or on disk. A snapshot reports capture, not execution success; an
    old `capturing` snapshot proves nothing about later completeness.
    """

    state: RecoveryState
    path: str | None
    bytes: int
    captured_bytes: int
    reason: RecoveryReason | None = None

    def to_dict(self) -> JSONObject:
        """The details shape `{state, path?, bytes, captured_bytes, reason?}`."""
        out: JSONObject = {"state": self.state}
        if self.path is not None:
            out["path"] = self.path
        out["bytes"] = self.bytes
        out["captured_bytes"] = self.captured_bytes
        if self.reason is not None:
            out["reason"] = self.reason
        return out

    def line(self, label: str) -> str:
        """The model-facing recovery line of one stream.

        `<label> recovery: <state>[ (<reason>)][ — <path>]`
        ` [<captured>/<bytes> UTF-8 bytes captured]`
        """
        text = f"{label} recovery: {self.state}"
        if self.reason is not None:
            text += f" ({self.reason})"
        if self.path is not None:
            text += f" — {self.path}"
        return text + f" [{self.captured_bytes}/{self.bytes} UTF-8 bytes captured]"


def _write_all(fd: int, chunks: list[bytes]) -> None:
    """Write every chunk in order with `writev`: no joined copy of the batch is made."""
    views = [memoryview(chunk) for chunk in chunks]
    while views:
        written = os.writev(fd, views[:IOV_BATCH])
        while written and written >= len(views[0]):
            written -= len(views.pop(0))
        if written:
            views[0] = views[0][written:]


@dataclass(frozen=True)
class _FileIdentity:
    path: str  # what the model is shown
    name: str  # what pct uses, relative to the directory descriptor it holds
    dev: int
    ino: int

    def matches(self, st: os.stat_result) -> bool:
        return (st.st_dev, st.st_ino) == (self.dev, self.ino)


def _path_leads_to(ident: _FileIdentity) -> bool:
    """The shown path still reaches this very file (not moved, not swapped, not deleted)."""
    try:
        return ident.matches(os.stat(ident.path))
    except OSError:
        return False


def folder_name() -> str:
    """A fresh capture folder name (screenshots replace it with a fixed one)."""
    # The owner's process tag in the name lets a later start-up tell a folder whose process
    # died (`sweep_stale_output_dirs`) from a live one.
    return f"{DIR_PREFIX}{process_tag()}-{secrets.token_hex(4)}"


def _make_folder(root: CaptureRoot) -> tuple[int, _FileIdentity]:
    """Create this process's 0700 capture folder under `root`; return its descriptor."""
    for _ in range(100):
        name = folder_name()
        try:
            os.mkdir(name, 0o700, dir_fd=root.fd)
        except FileExistsError:
            continue
        fd = os.open(name, DIR_FLAGS, dir_fd=root.fd)
        try:
            st = os.fstat(fd)
            if stat.S_IMODE(st.st_mode) != 0o700:  # a tight umask narrows it
                os.fchmod(fd, 0o700)
        except OSError:
            os.close(fd)
            raise
        return fd, _FileIdentity(os.path.join(root.path, name), name, st.st_dev, st.st_ino)
    raise FileExistsError(f"no free capture folder name under {root.path}")


class Capture:
    """The cumulative capture of one producer stream. Create it with `OutputOwner.open_capture`."""

    def __init__(self, owner: OutputOwner, label: str, prefix_limit: int) -> None:
        self._owner = owner
        self.label = label
        self._prefix_limit = prefix_limit
        self._pending_cap = max(2 * prefix_limit, MIN_PENDING_BYTES)
        self._batch_limit = max(self._pending_cap // 2, 1)
        self._inflight_chunks = 0
        self._memory: list[bytes] = []  # the prefix, while there is no file
        self._memory_bytes = 0
        self._pending: deque[bytes] = deque()
        self._pending_bytes = 0
        self._committed = 0
        self._captured = 0
        self._file: _FileIdentity | None = None
        self._fd: int | None = None
        self._want_file = False
        self._writer: asyncio.Task[None] | None = None
        self._source_done = False
        self._reason: RecoveryReason | None = None
        self._changed = asyncio.Event()
        self._progress = asyncio.Event()
        if owner.closed:
            self._reason = "owner-closed"

    # -- producer side -------------------------------------------------------------------
    @property
    def blocked(self) -> bool:
        """True while the file writer is behind; the producer must wait on `ready()`."""
        if self._reason is not None or not self._want_file:
            return False
        chunks = len(self._pending) + self._inflight_chunks
        return chunks >= MAX_PENDING_CHUNKS or self._pending_bytes >= self._pending_cap

    async def ready(self) -> None:
        """Wait until appending is admitted again (or capture has failed, which never blocks)."""
        while self.blocked:
            self._progress.clear()
            await self._progress.wait()

    def append(self, data: bytes | str) -> None:
        """Commit decoded text (UTF-8 bytes or str). Never blocks; see `blocked`."""
        if isinstance(data, str):
            data = data.encode("utf-8")
        if not data:
            return
        if self._source_done:
            raise RuntimeError("append after finish")
        was_blocked = self.blocked
        self._committed += len(data)
        if self._reason is not None:
            return
        if was_blocked:
            self._fail("overload")
            return
        if not self._want_file:
            self._memory.append(data)
            self._memory_bytes += len(data)
            self._captured += len(data)
            if self._memory_bytes > self._prefix_limit:
                self.request_file()
            return
        self._pending.append(data)
        self._pending_bytes += len(data)
        self._changed.set()

    def finish(self, *, source_error: bool = False) -> None:
        """The producer ended. `source_error` marks text that may be missing at the source."""
        if self._source_done:
            return
        self._source_done = True
        if source_error and self._reason is None:
            self._reason = "source-error"
        self._changed.set()
        self._progress.set()

    # -- file lifecycle ------------------------------------------------------------------
    def request_file(self) -> None:
        """Ask for a recovery file (yield, spill or preview loss). Idempotent, lazy."""
        if self._want_file or self._reason is not None:
            return
        self._want_file = True
        # The in-memory prefix becomes the first pending write; it is already counted.
        self._captured -= self._memory_bytes
        for chunk in self._memory:
            self._pending.append(chunk)
        self._pending_bytes += self._memory_bytes
        self._memory = []
        self._memory_bytes = 0
        self._writer = asyncio.get_running_loop().create_task(self._write_loop())
        self._owner._track(self)

    async def publish(self) -> RecoveryRecord:
        """Make sure a file exists (creating it if needed) and return a snapshot with its path."""
        self.request_file()
        while self._file is None and self._reason is None and self._writer is not None:
            if self._writer.done():
                break
            self._progress.clear()
            await self._progress.wait()
        return self.snapshot()

    async def flush(self) -> RecoveryRecord:
        """Wait until every committed byte is confirmed (or capture failed); return a snapshot."""
        while self._want_file and self._reason is None and self._pending_bytes:
            if self._writer is None or self._writer.done():
                break
            self._progress.clear()
            await self._progress.wait()
        return self.snapshot()

    @property
    def committed(self) -> int:
        """UTF-8 bytes committed so far (a viewer's position in the stream)."""
        return self._committed

    @property
    def has_file(self) -> bool:
        return self._file is not None

    @property
    def file_requested(self) -> bool:
        """A file was asked for (it may still be being created, or creation failed)."""
        return self._want_file

    def memory_text(self) -> str | None:
        """The whole capture when it is still only in memory (no file was needed)."""
        if self._want_file or self._reason is not None:
            return None
        return b"".join(self._memory).decode("utf-8", errors="replace")

    def snapshot(self) -> RecoveryRecord:
        path = self._file.path if self._file is not None else None
        reason = self._reason
        if reason is None and self._file is not None and not _path_leads_to(self._file):
            reason = "missing"
        if reason is not None:
            state: RecoveryState = "partial" if path is not None else "unavailable"
            if reason == "source-error" and self._captured == self._committed:
                state = "partial"
        elif not self._source_done or self._captured < self._committed:
            state = "capturing"
        else:
            state = "complete"
        return RecoveryRecord(state, path, self._committed, self._captured, reason)

    # -- internals -----------------------------------------------------------------------
    def _fail(self, reason: RecoveryReason) -> None:
        if self._reason is None or self._reason == "source-error":
            self._reason = reason
        self._pending.clear()
        self._pending_bytes = 0
        self._memory = []
        self._memory_bytes = 0
        self._changed.set()
        self._progress.set()

    async def _in_thread(self, fn: Callable[[], _T]) -> _T:
        """Run blocking I/O in a thread, waiting at most the owner's I/O timeout."""
        loop = asyncio.get_running_loop()
        fut = loop.run_in_executor(None, fn)
        done, _ = await asyncio.wait({fut}, timeout=self._owner.io_timeout)
        if not done:
            raise TimeoutError
        return fut.result()

    async def _write_loop(self) -> None:
        try:
            try:
                fd, ident = await self._in_thread(self._owner._create_file)
            except TimeoutError:
                self._fail("io-timeout")
                return
            except OSError:
                self._fail("io-error")
                return
            self._fd, self._file = fd, ident
            self._progress.set()
            while self._reason is None:
                if not self._pending:
                    if self._source_done or self._owner.closed:
                        break
                    self._changed.clear()
                    await self._changed.wait()
                    continue
                if (
                    not self._source_done
                    and self._pending_bytes < COALESCE_BYTES
                    and not self._owner.closed
                ):
                    # Yield one loop iteration so ready producer callbacks can add their
                    # chunks: fewer, larger thread round trips at high output rates.
                    await asyncio.sleep(0)
                    if self._reason is not None:
                        break
                # Hand over at most half the admission window, so the producer can keep
                # filling the other half while this batch is written (a pipeline, not a
                # stop-and-go).
                taken: list[bytes] = []
                size = 0
                while self._pending and (not taken or size < self._batch_limit):
                    chunk = self._pending.popleft()
                    taken.append(chunk)
                    size += len(chunk)
                self._inflight_chunks = len(taken)
                try:
                    await self._in_thread(functools.partial(_write_all, fd, taken))
                except TimeoutError:
                    self._fail("io-timeout")
                    return
                except OSError:
                    self._fail("io-error")
                    return
                finally:
                    self._inflight_chunks = 0
                self._pending_bytes -= size
                self._captured += size
                self._progress.set()
        finally:
            self._close_fd()
            self._progress.set()

    def _close_fd(self) -> None:
        fd, self._fd = self._fd, None
        if fd is not None:
            with contextlib.suppress(OSError):
                os.close(fd)

    def _owner_closing(self) -> None:
        if not self._source_done or self._pending_bytes:
            self._fail("owner-closed")
        self._changed.set()


class OutputOwner:
    """Per-session owner of execution captures and their recovery files.

    Shared by Shell Sessions and Code Mode. `close()` is the session's file expiry: producers
    should be stopped first; any capture still running is marked `owner-closed`.
    """

    def __init__(
        self,
        *,
        root: str | os.PathLike[str] | None = None,
        io_timeout: float = IO_TIMEOUT_SECONDS,
    ) -> None:
        # `root` replaces the process's capture root (tests, benches): an existing folder.
        self._given_root = os.fspath(root) if root is not None else None
        self.io_timeout = io_timeout
        self._lock = threading.Lock()
        self._root: CaptureRoot | None = None
        self._dir: _FileIdentity | None = None
        self._dir_fd: int | None = None
        self._files: list[_FileIdentity] = []
        self._captures: list[Capture] = []
        self._closed = False

    @property
    def closed(self) -> bool:
        return self._closed

    @property
    def directory(self) -> Path | None:
        """The private directory, once a file has been needed."""
        return Path(self._dir.path) if self._dir is not None else None

    def open_capture(self, label: str, *, prefix_limit: int = DEFAULT_PREFIX_BYTES) -> Capture:
        """A new capture for one producer stream.

        Up to `prefix_limit` bytes stay in memory; beyond that the capture spills to a file.
        """
        return Capture(self, label, prefix_limit)

    def _track(self, capture: Capture) -> None:
        self._captures.append(capture)

    def _open_root(self) -> CaptureRoot:
        if self._root is None:
            if self._given_root is not None:
                self._root = open_given_root(self._given_root)
            else:
                self._root = process_capture_root()
        return self._root

    def _create_file(self) -> tuple[int, _FileIdentity]:
        """Thread side: lazily create the private folder, then one exclusive 0600 file."""
        with self._lock:
            if self._closed:
                raise OSError("output owner closed")
            if self._dir_fd is None or self._dir is None:
                self._dir_fd, self._dir = _make_folder(self._open_root())
            name = f"{uuid.uuid4()}.txt"
            flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | OPEN_NOFOLLOW | OPEN_CLOEXEC
            fd = os.open(name, flags, 0o600, dir_fd=self._dir_fd)
            try:
                st = os.fstat(fd)
                if stat.S_IMODE(st.st_mode) != 0o600:
                    os.fchmod(fd, 0o600)
            except OSError:
                os.close(fd)
                raise
            ident = _FileIdentity(os.path.join(self._dir.path, name), name, st.st_dev, st.st_ino)
            self._files.append(ident)
            return fd, ident

    def _remove_files(self) -> list[str]:
        """Thread side: unlink only files this owner created (same identity), then its folder,
        all relative to the descriptors it holds."""
        failed: list[str] = []
        with self._lock:
            dir_fd, self._dir_fd = self._dir_fd, None
            folder, self._dir = self._dir, None
            files, self._files = self._files, []
            if dir_fd is not None:
                for ident in files:
                    try:
                        st = os.stat(ident.name, dir_fd=dir_fd, follow_symlinks=False)
                        if ident.matches(st):  # someone replaced it: not ours to delete
                            os.unlink(ident.name, dir_fd=dir_fd)
                    except FileNotFoundError:
                        continue
                    except OSError:
                        failed.append(ident.path)
                os.close(dir_fd)
            root = self._root
            if folder is not None and root is not None:
                try:
                    st = os.stat(folder.name, dir_fd=root.fd, follow_symlinks=False)
                    if folder.matches(st):
                        os.rmdir(folder.name, dir_fd=root.fd)
                except FileNotFoundError:
                    pass
                except OSError:
                    failed.append(folder.path)
            if root is not None and self._given_root is not None:
                os.close(root.fd)  # the process's own root stays open for the next session
            self._root = None
        return failed

    async def close(self) -> list[str]:
        """Session end: stop writers, delete this owner's files. Idempotent.

        Returns the paths that could not be removed (empty when cleanup was complete).
        """
        if self._closed:
            return []
        with self._lock:
            self._closed = True
        writers = []
        for capture in self._captures:
            capture._owner_closing()
            if capture._writer is not None and not capture._writer.done():
                writers.append(capture._writer)
        if writers:
            _, pending = await asyncio.wait(writers, timeout=self.io_timeout)
            for task in pending:
                task.cancel()
        self._captures = []
        loop = asyncio.get_running_loop()
        fut = loop.run_in_executor(None, self._remove_files)
        done, _ = await asyncio.wait({fut}, timeout=self.io_timeout)
        if not done:
            return ["<cleanup timed out>"]
        return fut.result()
