"""A coloured rendering of an apply_patch approval preview (files, then the patch)."""

from __future__ import annotations

from rich.text import Text

_STYLES: tuple[tuple[str, str], ...] = (
    ("*** Begin Patch", "bold"),
    ("*** End Patch", "bold"),
    ("*** Add File: ", "bold green"),
    ("*** Delete File: ", "bold red"),
    ("*** Update File: ", "bold yellow"),
    ("*** Move to: ", "bold yellow"),
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
        text.append(line + "\n", style=style)
    text.rstrip()
    return text
