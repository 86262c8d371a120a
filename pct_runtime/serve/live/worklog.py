"""The work a live console sees (shell jobs, code cells) and the output log it follows.

A followed work's output is never queued per connection: one `WorkLog` per work holds its
text (what was captured before the first follow, then every chunk as it arrives), and each
connection reads it at its own pace by character offset. The log keeps a bounded window in
memory and reads older pieces back from the work's own captures (its recovery files), so
a console that falls behind still gets every character, costs no memory beyond the window,
and never slows the job that produces the output.
"""

from __future__ import annotations

import asyncio
import bisect
import contextlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from pct_runtime.output import Capture
from pct_runtime.serve.live.protocol import MAX_TITLE, WorkInfo, WorkKind

#: How the model's result names a stop from a console over live control.
LIVE_CONSOLE = "live_console"
#: Characters a work's live log holds in memory (older text is read back from the
#: recovery files when a follower needs it).
MAX_LOG_CHARS = 4 * 1024 * 1024
#: Largest run of one stream kept as one piece of the log.
PIECE_CHARS = 64 * 1024
#: Pieces a log indexes (a job alternating stdout and stderr makes one per switch); past
#: it the oldest tenth is forgotten and becomes a gap.
MAX_PIECES = 100_000


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
    @property
    def stopping(self) -> bool: ...
    def request_stop(self, *, by: str | None = None) -> asyncio.Task[bool]: ...
    def type_for_operator(self, data: bytes, *, by: str) -> object | None: ...


class CellView(Protocol):
    @property
    def id(self) -> str: ...
    @property
    def state(self) -> str: ...
    @property
    def title(self) -> str: ...
    @property
    def terminal(self) -> asyncio.Event: ...
    @property
    def stopping(self) -> bool: ...
    def output_capture(self) -> Capture: ...
    def add_output_listener(self, listener: Callable[[str], None]) -> Callable[[], None]: ...
    async def stop(self, *, by: str | None = None) -> bool: ...


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

    @property
    def stopping(self) -> bool:
        """A stop (anyone's) is signalling or waiting for its confirmation right now."""
        if not self.running:
            return False
        if self.job is not None:
            return self.job.stopping
        assert self.cell is not None
        return self.cell.stopping

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

    def add_listener(self, listener: Callable[[int, str], None]) -> Callable[[], None]:
        """`listener(source, text)` for every chunk; `source` indexes `captures()`."""
        if self.job is not None:
            labels = [s.capture.label for s in self.job.streams]

            def on_job(label: str, text: str) -> None:
                listener(labels.index(label) if label in labels else 0, text)

            return self.job.add_output_listener(on_job)
        assert self.cell is not None
        return self.cell.add_output_listener(lambda text: listener(0, text))

    async def stop(self) -> bool:
        """Stop it as the model's terminate would, telling the model a console did; False
        when it had already ended."""
        if not self.running:
            return False
        if self.job is not None:
            return bool(await asyncio.shield(self.job.request_stop(by=LIVE_CONSOLE)))
        assert self.cell is not None
        return await self.cell.stop(by=LIVE_CONSOLE)

    def type_input(self, data: bytes) -> bool:
        """A person's keystrokes into a shell job's stdin; the model's next read gets only
        their count. False when it is not a shell job that takes input now."""
        if self.job is None or not self.running:
            return False
        return self.job.type_for_operator(data, by=LIVE_CONSOLE) is not None

    def forget(self) -> None:
        """The session ended: the work is gone, and so is its log's source."""
        self._gone = True
        for remove in self._removers:
            remove()
        self._removers.clear()
        if self.log is not None:
            self.log.end()


def _utf8_len(text: str) -> int:
    return len(text) if text.isascii() else len(text.encode("utf-8"))


def _read_range(path: str, start: int, size: int) -> bytes:
    with open(path, "rb") as handle:
        handle.seek(start)
        return handle.read(size)


@dataclass(eq=False)
class _Piece:
    """A run of the log's text: characters `[start, start + length)`, which are bytes
    `[byte_start, byte_start + byte_len)` of capture `source`. `text` is None once the
    piece left memory; it is then read back from the capture."""

    start: int
    length: int
    source: int
    byte_start: int
    byte_len: int
    text: str | None


class WorkLog:
    """The text of one work for its followers: what was captured, then every new chunk.

    Offsets count characters from the start of the work's output: what each capture held
    at the first follow (stdout, then stderr; at most the last `MAX_LOG_CHARS` of each,
    the older part being a gap), then every chunk in arrival order. At most
    `MAX_LOG_CHARS` stay in memory; older pieces are read back from the work's captures
    (its recovery files), so a follower that falls behind still gets every character —
    unless the capture itself lost it (a failed recovery file), which shows as a gap.
    """

    def __init__(self, work: TrackedWork) -> None:
        self.work = work
        self.followers: set[Callable[[], None]] = set()
        self._captures = work.captures()
        self._pieces: list[_Piece] = []
        self._starts: list[int] = []  # piece starts, for bisect
        self._held = 0  # index of the first piece still in memory
        self._held_chars = 0
        self._total = 0
        self._early: list[tuple[int, str, int]] = []
        self.ready = False
        self.ended = False
        # Listener and positions in one synchronous step: nothing falls between them.
        self._remove = work.add_listener(self._on_live)
        parts: list[tuple[int, str | None, int]] = []
        for source, capture in enumerate(self._captures):
            parts.append((source, capture.memory_text(), capture.committed))
        self._task = asyncio.get_running_loop().create_task(self._load(parts))

    @property
    def start(self) -> int:
        """The offset of the oldest character a follower can still get."""
        return self._pieces[0].start if self._pieces else self._total

    @property
    def total(self) -> int:
        return self._total

    async def _load(self, parts: list[tuple[int, str | None, int]]) -> None:
        for source, memory, size in parts:
            if memory is not None:
                self._add(source, memory, 0)
                continue
            capture = self._captures[source]
            with contextlib.suppress(Exception):  # capture failed: the live part still shows
                await capture.flush()
            path = capture.snapshot().path
            if path is None or not size:
                continue
            skip = max(0, size - MAX_LOG_CHARS)
            try:
                data = await asyncio.to_thread(_read_range, path, skip, size - skip)
            except OSError:
                continue
            if skip:  # start at a line (and so a character) boundary
                cut = data.find(b"\n") + 1
                skip, data = skip + cut, data[cut:]
                self._total += skip  # the offset jump (its size in bytes) shows the gap
            self._add(source, data.decode("utf-8", errors="replace"), skip)
        early, self._early = self._early, []
        for source, text, byte_end in early:
            self._add(source, text, byte_end - _utf8_len(text))
        self.ready = True
        self._changed()
        if not self.work._gone:
            await self.work.finished.wait()
        self.end()

    def _on_live(self, source: int, text: str) -> None:
        if not text:
            return
        # The capture took the chunk before telling viewers: it ends at `committed`.
        byte_end = self._captures[source].committed if source < len(self._captures) else 0
        if not self.ready:
            self._early.append((source, text, byte_end))
            return
        self._add(source, text, byte_end - _utf8_len(text))
        self._changed()

    def _add(self, source: int, text: str, byte_start: int) -> None:
        if not text:
            return
        size = _utf8_len(text)
        last = self._pieces[-1] if self._pieces else None
        if (
            last is not None
            and last.text is not None
            and last.source == source
            and last.byte_start + last.byte_len == byte_start
            and last.length + len(text) <= PIECE_CHARS
        ):  # small chunks of one stream share a piece: few pieces per megabyte
            last.text += text
            last.length += len(text)
            last.byte_len += size
        else:
            self._pieces.append(_Piece(self._total, len(text), source, byte_start, size, text))
            self._starts.append(self._total)
        self._total += len(text)
        self._held_chars += len(text)
        while self._held_chars > MAX_LOG_CHARS and self._held < len(self._pieces) - 1:
            piece = self._pieces[self._held]
            self._held_chars -= piece.length
            piece.text = None  # read back from its capture when a follower needs it
            self._held += 1
        if len(self._pieces) > MAX_PIECES and self._held > MAX_PIECES // 10:
            drop = MAX_PIECES // 10
            del self._pieces[:drop]
            del self._starts[:drop]
            self._held -= drop

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

    async def read(self, offset: int, limit: int) -> tuple[int, str]:
        """`(offset, text)`: up to `limit` characters from `offset`, or from the next text
        the log can still give when that part is lost (the offset then jumps)."""
        if not self.ready:
            return offset, ""
        offset = max(offset, self.start)
        while offset < self._total:
            index = bisect.bisect_right(self._starts, offset) - 1
            piece = self._pieces[index]
            end = piece.start + piece.length
            if offset >= end:  # a gap (text older than the first follow's window)
                following = self._pieces[index + 1] if index + 1 < len(self._pieces) else None
                offset = following.start if following is not None else self._total
                continue
            text = piece.text if piece.text is not None else await self._read_back(piece)
            if text is None:  # the capture lost it: skip to the next piece
                offset = end
                continue
            at = offset - piece.start
            out = text[at : at + limit]  # no copy of the piece's whole tail per read
            for later in self._pieces[index + 1 :]:  # fill from held, adjacent text (no I/O)
                if len(out) >= limit or later.text is None or later.start != offset + len(out):
                    break
                out += later.text[: limit - len(out)]
            return offset, out
        return offset, ""

    async def _read_back(self, piece: _Piece) -> str | None:
        if piece.source >= len(self._captures):
            return None
        capture = self._captures[piece.source]
        memory = capture.memory_text()
        if memory is not None:
            data = memory.encode("utf-8")[piece.byte_start : piece.byte_start + piece.byte_len]
        else:
            with contextlib.suppress(Exception):
                await capture.flush()
            record = capture.snapshot()
            if record.path is None or record.captured_bytes < piece.byte_start + piece.byte_len:
                return None
            try:
                data = await asyncio.to_thread(
                    _read_range, record.path, piece.byte_start, piece.byte_len
                )
            except OSError:
                return None
        if len(data) != piece.byte_len:
            return None
        text = data.decode("utf-8", errors="replace")
        return text if len(text) == piece.length else None

    def close(self) -> None:
        """No follower is left: stop listening (a later follow builds a fresh log)."""
        self._remove()
        self._task.cancel()
