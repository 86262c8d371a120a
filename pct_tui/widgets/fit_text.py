"""Text that fits its width: a word too long for a line (a path, a URL) is shortened in
the middle with an ellipsis instead of being broken mid-word; the rest wraps at spaces.

The full text stays available (copy it from `pct status` or the events log); the console
shows where a path starts and which file it names. Commands meant to be copied are never
shortened: `whole=True` folds them instead, and the Status screen's `c` copies them.
"""

from __future__ import annotations

from collections.abc import Callable

from rich.cells import cell_len
from rich.console import Console, RenderableType
from rich.text import Text
from textual.events import Resize
from textual.widgets import Static

from pct_runtime.output.terminal_text import visible

ELLIPSIS = "…"
_CONSOLE = Console(width=10_000)


def shorten_middle(word: str, width: int) -> str:
    """`word` cut to `width` cells with `…` in the middle, keeping more of the end (the
    file name) than of the start."""
    if cell_len(word) <= width:
        return word
    if width <= 1:
        return ELLIPSIS[:width]
    keep = width - 1
    head = keep // 3
    tail = keep - head
    return word[:head] + ELLIPSIS + word[len(word) - tail :]


def fit_words(text: str, width: int) -> str:
    """Every word longer than its line's room (width less the line's indent) shortened."""
    if width <= 0:
        return text
    lines = []
    for line in text.split("\n"):
        if cell_len(line) <= width:
            lines.append(line)
            continue
        indent = len(line) - len(line.lstrip(" "))
        room = max(8, width - indent)
        lines.append(" ".join(shorten_middle(w, room) for w in line.split(" ")))
    return "\n".join(lines)


#: Where a command too wide for its line may be cut: after a space, else inside a long
#: word after a path, option or URL separator (so no name is cut in the middle).
_COMMAND_BREAKS = (" ", "/", "-", ":", "=", ",")


def fold_command(line: str, width: int) -> list[str]:
    """A command cut into pieces of at most `width` cells that join back to it exactly
    (nothing added or elided), each cut after a space or a separator where one fits."""
    pieces: list[str] = []
    rest = line
    while cell_len(rest) > width:
        window = rest[:width]
        least = len(window) // 3  # a cut earlier than this would waste most of the line
        cut = window.rfind(" ") + 1  # a space first, then a separator, then the edge
        if cut <= least:
            cut = max(window.rfind(mark) + 1 for mark in _COMMAND_BREAKS[1:])
        if cut <= least:
            cut = width
        pieces.append(rest[:cut])
        rest = rest[cut:]
    return [*pieces, rest]


def fold_whole(text: str, width: int) -> str:
    """Commands kept whole: a line indented as a command (two spaces) that is too wide is
    cut into pieces that join back to it (`fold_command`), never shortened; other lines
    wrap at spaces, a too-long word folded, never elided."""
    if width <= 0:
        return text
    lines: list[str] = []
    for line in text.split("\n"):
        if cell_len(line) <= width:
            lines.append(line)
        elif line.startswith("  "):
            lines += fold_command(line, width)
        else:
            lines += [
                str(part)
                for part in Text(line, overflow="fold").wrap(_CONSOLE, width, no_wrap=False)
            ]
    return "\n".join(lines)


class FitText(Static):
    """A `Static` whose source text is re-fitted to its width on every resize."""

    def __init__(
        self,
        text: str = "",
        *,
        style: Callable[[str], RenderableType] = Text,
        id: str | None = None,
        classes: str | None = None,
        whole: bool = False,
    ) -> None:
        super().__init__("", id=id, classes=classes, markup=False)
        self.source = text
        self._style = style
        #: Commands to copy: folded whole, never shortened (`fold_whole`).
        self._fit = fold_whole if whole else fit_words
        self._fitted_width = -1

    def set_text(self, text: str) -> None:
        self.source = text
        self._apply(force=True)

    def on_mount(self) -> None:
        self._apply(force=True)

    def on_resize(self, _: Resize) -> None:
        self._apply()

    def _apply(self, *, force: bool = False) -> None:
        width = self.content_size.width
        if not force and width == self._fitted_width:
            return
        self._fitted_width = width
        source = visible(self.source, lines=True)  # often recorded or remote text
        self.update(self._style(self._fit(source, width) if width > 0 else source))
