"""What a preflighted patch would make of each file, as unified diffs against disk now.

Pure and read-only: `prepare_patch` already parsed the patch, matched every hunk and
computed each file's new content (steps 1–3); this module only reads the current content
of each source and renders the difference, so an approver sees the real change rather than
the patch's context lines. Nothing is staged or written.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from typing import Literal

from pct_runtime.capabilities.apply_patch.executor import PreparedPatch
from pct_runtime.capabilities.apply_patch.source import Rewrite
from pct_runtime.host.ui import AskedDiff

#: Diff lines per file before the rest is summarised (the approval must stay readable).
MAX_DIFF_LINES = 400


@dataclass(frozen=True)
class FileDiff:
    """One operation: `path` (the destination), `source` (a move's origin) and its diff."""

    operation: Literal["add", "update", "delete", "move"]
    path: str
    source: str | None
    lines: tuple[str, ...]


def _text(content: bytes | Rewrite | None) -> list[str]:
    if content is None:
        return []
    if isinstance(content, Rewrite):  # an update: the source's bytes with the matched edits
        content = b"".join(bytes(piece) for piece in content.pieces())
    return content.decode("utf-8-sig", errors="replace").splitlines()


def _current(path: str | None) -> list[str]:
    if path is None:
        return []
    try:
        with open(path, "rb") as handle:
            data = handle.read()
    except OSError:
        return []
    return data.decode("utf-8-sig", errors="replace").splitlines()


def file_diffs(prepared: PreparedPatch, *, max_lines: int = MAX_DIFF_LINES) -> list[FileDiff]:
    """Each planned operation's unified diff (3 lines of context), current → would-be."""
    out: list[FileDiff] = []
    for plan in prepared.plans:
        summary = plan.summary
        old = _current(plan.source)
        if plan.kind == "delete":
            new: list[str] = []
        elif plan.kind == "rename":  # a move without hunks: the bytes travel unchanged
            new = old
        else:
            new = _text(plan.content)
        before = summary.from_path or summary.path
        diff = list(
            difflib.unified_diff(
                old,
                new,
                fromfile="/dev/null" if plan.kind == "add" else f"a/{before}",
                tofile="/dev/null" if plan.kind == "delete" else f"b/{summary.path}",
                lineterm="",
            )
        )
        if len(diff) > max_lines:
            hidden = len(diff) - max_lines
            diff = [*diff[:max_lines], f"… {hidden} more diff lines"]
        out.append(FileDiff(summary.operation, summary.path, summary.from_path, tuple(diff)))
    return out


def question_diffs(prepared: PreparedPatch) -> list[AskedDiff]:
    """Each file's diff as an approval question carries it to whichever port answers
    (reads files: call in a thread)."""
    return [
        AskedDiff(d.path, "\n".join(d.lines), d.operation, d.source) for d in file_diffs(prepared)
    ]
