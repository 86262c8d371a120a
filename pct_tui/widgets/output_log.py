"""A live output log fed in batches: chunks are queued as they arrive and written to the
`Log` at most once per frame (~16 ms), a bounded slice at a time so keys stay responsive.

Chunks are never dropped or merged away (no `can_replace`); a producer faster than the
screen only makes the queue longer. The log keeps the newest `max_lines` lines on screen;
the complete output stays in the job's recovery file.
"""

from __future__ import annotations

import re
from collections import deque
from collections.abc import Callable

from rich.cells import cell_len
from textual.geometry import Size
from textual.timer import Timer
from textual.widgets import Log

FRAME_SECONDS = 1 / 60
SLICE_CHARS = 512 * 1024
_ANSI = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[@-Z\\-_]")
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")


def clean(text: str) -> str:
    """Strip ANSI escapes and control characters the `Log` widget would show as garbage."""
    if "\x1b" in text:
        text = _ANSI.sub("", text)
    return _CONTROL.sub("", text.replace("\r\n", "\n"))


class OutputLog(Log):
    DEFAULT_CSS = """
    OutputLog { height: 1fr; border: round $panel-lighten-2; }
    """

    def __init__(self, *, max_lines: int | None = 100_000, id: str | None = None) -> None:
        super().__init__(highlight=False, max_lines=max_lines, auto_scroll=True, id=id)
        self._queue: deque[str] = deque()
        self._timer: Timer | None = None
        self.received = 0
        self.written = 0
        #: Whether new output scrolls into view. Scrolling up pauses it so the operator can
        #: read back while a job writes; back at the end (`f`, End) it follows again.
        self.following = True
        #: Told when `following` changes (the viewer's title says so).
        self.on_follow: Callable[[bool], None] = lambda _: None

    def watch_scroll_y(self, old_value: float, new_value: float) -> None:
        super().watch_scroll_y(old_value, new_value)
        if new_value < old_value and new_value < self.max_scroll_y:
            self._set_following(False)
        elif new_value >= self.max_scroll_y:
            self._set_following(True)

    def _set_following(self, following: bool) -> None:
        if following != self.following:
            self.following = following
            self.on_follow(following)

    def follow_end(self) -> None:
        """Follow again: jump to the end and keep new output in view."""
        self._set_following(True)
        self.scroll_end(animate=False, immediate=True, x_axis=False)

    def feed(self, text: str) -> None:
        """Queue a chunk (from any callback on the app's loop); flushed on the next frame."""
        if not text:
            return
        self._queue.append(text)
        self.received += len(text)
        if self._timer is None:
            self._timer = self.set_timer(FRAME_SECONDS, self._flush, name="output-flush")

    @property
    def pending(self) -> int:
        return sum(len(chunk) for chunk in self._queue)

    def write(self, data: str, scroll_end: bool | None = None) -> OutputLog:
        """`Log.write` with one refresh per batch instead of one per line.

        Same result as the base class (a trailing partial line stays open for the next
        chunk), written against the internals of the pinned Textual version: the base
        method refreshes every line separately, which made a 256 KB batch cost ~100 ms.
        """
        if not data:
            return self
        lines = self._lines
        if not lines:
            lines.append("")
        start = len(lines) - 1
        parts = data.split("\n")
        lines[-1] += parts[0]
        lines.extend(parts[1:])
        width = self._width
        for line in lines[start:]:
            size = (
                len(line)
                if line.isascii() and "\t" not in line
                else cell_len(self._process_line(line))
            )
            if size > width:
                width = size
        self._width = width
        self.virtual_size = Size(width, self.line_count)
        if self.max_lines is not None and len(lines) > self.max_lines:
            removed = len(lines) - self.max_lines
            self._prune_max_lines()
            start = max(0, start - removed)
        self.refresh_lines(start, len(self._lines) - start)
        auto_scroll = self.following if scroll_end is None else scroll_end
        if auto_scroll:
            self.scroll_end(animate=False, immediate=True, x_axis=False)
        return self

    def _flush(self) -> None:
        self._timer = None
        parts: list[str] = []
        size = 0
        while self._queue and size < SLICE_CHARS:
            chunk = self._queue.popleft()
            parts.append(chunk)
            size += len(chunk)
        if parts:
            text = "".join(parts)
            self.written += len(text)
            self.write(clean(text))
        if self._queue:
            self._timer = self.set_timer(FRAME_SECONDS, self._flush, name="output-flush")
