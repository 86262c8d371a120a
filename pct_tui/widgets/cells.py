"""DataTable cells that show text as written.

A DataTable parses a plain `str` cell as Rich markup, so a command line such as
`echo "[/]"` (the model's choice) raised MarkupError and took the console down, and a path
like `app/[slug]/page.tsx` lost its `[slug]`. Every cell built from recorded or remote
text goes through `plain`, which also escapes control characters: Textual writes text to
the terminal as it is, so a recorded `printf '\x1b]0;…'` retitled the user's terminal.
"""

from __future__ import annotations

from rich.text import Text

from pct_runtime.output.terminal_text import visible


def plain(value: object) -> object:
    """`value` as a cell: a `str` becomes literal, escaped Text (cropped to one line as the
    table's own formatter does for one-line rows); anything else is left to the table."""
    if isinstance(value, str):
        return Text(visible(value), no_wrap=True, end="")
    return value


def plain_row(cells: tuple[object, ...]) -> tuple[object, ...]:
    return tuple(plain(cell) for cell in cells)


def literal(text: str) -> Text:
    """Text for a widget that would parse a `str` as markup (an `Option` prompt, a
    `Label`): shown as written, control characters escaped, free to wrap."""
    return Text(visible(text, lines=True))
