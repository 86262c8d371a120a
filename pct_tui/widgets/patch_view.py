"""A coloured rendering of an apply_patch approval preview (files, then the patch)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from rich.text import Text

from pct_runtime.output.terminal_text import visible


@dataclass(frozen=True)
class FileDiff:
    """One file of a change as the approval modal draws it: the operation (`add`,
    `update`, `delete`, `move`), the path, a move's source, and its diff lines."""

    operation: str
    path: str
    source: str | None
    lines: tuple[str, ...]


_STYLES: tuple[tuple[str, str], ...] = (
    ("*** Begin Patch", "bold"),
    ("*** End Patch", "bold"),
    ("*** Add File: ", "bold green"),
    ("*** Delete File: ", "bold red"),
    ("*** Update File: ", "bold yellow"),
    ("*** Move to: ", "bold yellow"),
    ("--- ", "bold"),
    ("+++ ", "bold"),
    ("@@", "cyan"),
    ("+", "green"),
    ("-", "red"),
)


def split_preview(message: str) -> tuple[list[str], str]:
    """`(files, patch)`: the operations list before the first blank line, then the patch."""
    head, sep, patch = message.partition("\n\n")
    if not sep and "*** Begin Patch" in head:
        return [], head
    return [line for line in head.splitlines() if line.strip()], patch


def patch_text(patch: str) -> Text:
    """The patch with added lines green, removed red, file headers bold, hunks cyan."""
    text = Text(no_wrap=False, overflow="fold")
    for line in patch.splitlines():
        style = ""
        for prefix, candidate in _STYLES:
            if line.startswith(prefix):
                style = candidate
                break
        text.append(visible(line, lines=True) + "\n", style=style)
    text.rstrip()
    return text


def diff_text(diffs: Sequence[FileDiff]) -> Text:
    """Each file's unified diff against its current content, one after another."""
    return patch_text("\n".join(line for diff in diffs for line in diff.lines))
