"""Text that fits its width: a word too long for a line (a path, a URL) is shortened in
the middle with an ellipsis instead of being broken mid-word; the rest wraps at spaces.

The full text stays available (copy it from `pct status` or the events log); the console
shows where a path starts and which file it names.
"""

from __future__ import annotations

from collections.abc import Callable

from rich.cells import cell_len
from rich.console import RenderableType
from rich.text import Text
from textual.events import Resize
from textual.widgets import Static

from pct_runtime.output.terminal_text import visible

ELLIPSIS = "…"


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


class FitText(Static):
    """A `Static` whose source text is re-fitted to its width on every resize."""

    def __init__(
        self,
        text: str = "",
        *,
        style: Callable[[str], RenderableType] = Text,
        id: str | None = None,
        classes: str | None = None,
    ) -> None:
        super().__init__("", id=id, classes=classes, markup=False)
        self.source = text
        self._style = style
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
        self.update(self._style(fit_words(source, width) if width > 0 else source))
