"""The work a live console sees (shell jobs, code cells) and the output log it follows.

A followed work's output is never queued per connection: one `WorkLog` per work holds its
text (what was captured before the first follow, then every chunk as it arrives), and each
connection reads it at its own pace by character offset. A stuck console therefore costs
no memory beyond the log, and never slows the job that produces the output. The log is
bounded; text older than its window is not held (a follower sees its offset jump) and
stays in the work's recovery files.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from pct_runtime.output import Capture
from pct_runtime.serve.live_protocol import MAX_TITLE, WorkInfo, WorkKind

#: Characters a work's live log holds (older text is in the recovery files).
MAX_LOG_CHARS = 4 * 1024 * 1024


# What the live view reads of a shell job and a code cell (their managers' viewer API),
# structurally: the serve layer names no capability.
class StreamView(Protocol):
    @property
    def capture(self) -> Capture: ...


class ShellJob(Protocol):
    @property
    def id(self) -> str: ...
    @property
    def command(self) -> str: ...
    @property
    def settled(self) -> asyncio.Event: ...
    @property
    def stop_requested(self) -> bool: ...
    @property
    def leader_exited(self) -> bool: ...
    @property
    def returncode(self) -> int | None: ...
    @property
    def streams(self) -> Sequence[StreamView]: ...
    def add_output_listener(self, listener: Callable[[str, str], None]) -> Callable[[], None]: ...
    def request_stop(self) -> asyncio.Task[bool]: ...


class CellView(Protocol):
    @property
    def id(self) -> str: ...
    @property
    def state(self) -> str: ...
    @property
    def title(self) -> str: ...
    @property
    def terminal(self) -> asyncio.Event: ...
    def output_capture(self) -> Capture: ...
    def add_output_listener(self, listener: Callable[[str], None]) -> Callable[[], None]: ...
    async def stop(self) -> bool: ...


@dataclass(eq=False)
class TrackedWork:
    """One shell job or code cell of a session, as the live protocol reports it."""

    session_id: str
    kind: WorkKind
    job: ShellJob | None = None
    cell: CellView | None = None
    log: WorkLog | None = None
    _gone: bool = False
    _removers: list[Callable[[], None]] = field(default_factory=list)

    @property
    def id(self) -> str:
        if self.job is not None:
            return self.job.id
        assert self.cell is not None
        return self.cell.id

    @property
    def finished(self) -> asyncio.Event:
        if self.job is not None:
            return self.job.settled
        assert self.cell is not None
        return self.cell.terminal

    @property
    def state(self) -> str:
        if self.job is not None:
            job = self.job
            if job.settled.is_set():
                return "terminated" if job.stop_requested else "completed"
            return "stopping" if job.stop_requested else "running"
        assert self.cell is not None
        return self.cell.state

    @property
    def running(self) -> bool:
        return self.state in ("running", "stopping") and not self._gone

    def info(self) -> WorkInfo:
        exit_code: int | None = None
        if self.job is not None and self.job.leader_exited:
            exit_code = self.job.returncode
        title = self.job.command if self.job is not None else self.cell.title if self.cell else ""
        title = " ".join(title.split())
        if len(title) > MAX_TITLE:
            title = title[: MAX_TITLE - 1] + "…"
        return WorkInfo(
            id=self.id,
            kind=self.kind,
            session_id=self.session_id,
            state=self.state,
            exit_code=exit_code,
            title=title,
            recovery_paths=tuple(p for p in (c.snapshot().path for c in self.captures()) if p),
        )

    def captures(self) -> list[Capture]:
        """The captures whose text a viewer shows, in display order (output, not results)."""
        if self.job is not None:
            return [s.capture for s in self.job.streams]
        assert self.cell is not None
        return [self.cell.output_capture()]

    def add_listener(self, listener: Callable[[str], None]) -> Callable[[], None]:
        if self.job is not None:
            return self.job.add_output_listener(lambda _label, text: listener(text))
        assert self.cell is not None
        return self.cell.add_output_listener(listener)

    async def stop(self) -> bool:
        """Stop it as the model's terminate would; False when it had already ended."""
        if not self.running:
            return False
        if self.job is not None:
            return bool(await asyncio.shield(self.job.request_stop()))
        assert self.cell is not None
        return await self.cell.stop()

    def forget(self) -> None:
        """The session ended: the work is gone, and so is its log's source."""
        self._gone = True
        for remove in self._removers:
            remove()
        self._removers.clear()
        if self.log is not None:
            self.log.end()


def _read_prefix(path: str, size: int) -> tuple[int, bytes]:
    """The first `size` bytes of a recovery file, or its last MAX_LOG_CHARS of them."""
    start = max(0, size - MAX_LOG_CHARS)
    with open(path, "rb") as handle:
        handle.seek(start)
        return start, handle.read(size - start)


class WorkLog:
    """The text of one work for its followers: what was captured, then every new chunk.

    Offsets count characters from the start of the work's output (stdout, then stderr,
    as captured before the first follow; then chunks in arrival order).
    """

    def __init__(self, work: TrackedWork) -> None:
        self.work = work
        self.followers: set[Callable[[], None]] = set()
        self._chunks: deque[str] = deque()
        self._start = 0  # offset of the first character held
        self._total = 0  # offset just past the last character
        self._early: list[str] = []
        self.ready = False
        self.ended = False
        # Listener and snapshot in one synchronous step: nothing falls between them.
        self._remove = work.add_listener(self._on_live)
        parts: list[str | tuple[Capture, int]] = []
        for capture in work.captures():
            memory = capture.memory_text()
            parts.append(memory if memory is not None else (capture, capture.snapshot().bytes))
        self._task = asyncio.get_running_loop().create_task(self._load(parts))

    @property
    def start(self) -> int:
        return self._start

    @property
    def total(self) -> int:
        return self._total

    async def _load(self, parts: list[str | tuple[Capture, int]]) -> None:
        for part in parts:
            if isinstance(part, str):
                self._append(part)
                continue
            capture, size = part
            with contextlib.suppress(Exception):  # capture failed: the live part still shows
                await capture.flush()
            path = capture.snapshot().path
            if path is None or not size:
                continue
            try:
                skipped, data = await asyncio.to_thread(_read_prefix, path, size)
            except OSError:
                continue
            if skipped and not self._total:
                self._start = self._total = skipped
            self._append(data.decode("utf-8", errors="replace"))
        early, self._early = self._early, []
        for text in early:
            self._append(text)
        self.ready = True
        self._changed()
        if not self.work._gone:
            await self.work.finished.wait()
        self.end()

    def _on_live(self, text: str) -> None:
        if not self.ready:
            self._early.append(text)
            return
        self._append(text)
        self._changed()

    def _append(self, text: str) -> None:
        if not text:
            return
        self._chunks.append(text)
        self._total += len(text)
        while self._total - self._start > MAX_LOG_CHARS and len(self._chunks) > 1:
            self._start += len(self._chunks.popleft())

    def _changed(self) -> None:
        for wake in list(self.followers):
            wake()

    def end(self) -> None:
        """The work finished or its session ended: followers get their last chunk."""
        if self.ended:
            return
        self.ended = True
        self._remove()
        if self.ready and self._task is not asyncio.current_task():
            self._task.cancel()  # only waiting for the finish now
        self._changed()

    def read(self, offset: int, limit: int) -> tuple[int, str]:
        """`(offset, text)` from `offset` (or the oldest held text, when that is later)."""
        if not self.ready:
            return offset, ""
        offset = max(offset, self._start)
        if offset >= self._total:
            return offset, ""
        out: list[str] = []
        size = 0
        position = self._start
        for chunk in self._chunks:
            end = position + len(chunk)
            if end > offset:
                piece = chunk[max(0, offset - position) :]
                out.append(piece[: limit - size])
                size += len(out[-1])
                if size >= limit:
                    break
            position = end
        return offset, "".join(out)

    def close(self) -> None:
        """No follower is left: stop listening (a later follow builds a fresh log)."""
        self._remove()
        self._task.cancel()
