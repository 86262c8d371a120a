"""Every way `apply_patch` refuses or fails, as one exception family.

`str(error)` is always the exact model-facing text; `code` is the machine-readable reason the
tool maps onto `ToolError.code`. Kept free of imports so the CLI path stays light.
"""

from __future__ import annotations

from typing import Any


class ApplyPatchError(Exception):
    code = "apply-patch-failed"

    def __init__(
        self, message: str, *, line: int | None = None, details: dict[str, Any] | None = None
    ):
        super().__init__(message)
        self.message = message
        self.line = line
        self.details: dict[str, Any] = dict(details or {})

    def __str__(self) -> str:
        return self.message


class PatchSyntaxError(ApplyPatchError, ValueError):
    """The envelope or a section is malformed, or a path is not allowed. Nothing changed."""

    code = "invalid-patch"


class PathConflictError(PatchSyntaxError):
    """Two sections name one file, or a file and its ancestor directory (not expressible in
    the grammar, so tests tell these apart from grammar-level rejections)."""


class MatchError(ApplyPatchError, ValueError):
    """A hunk does not match the current file (missing or ambiguous). Nothing changed."""

    code = "patch-mismatch"


class PreflightError(ApplyPatchError):
    """A filesystem check failed before any change (missing file, symlink, encoding…)."""

    code = "patch-rejected"


class PatchAbortedError(ApplyPatchError):
    """Cancelled before the first commit step. Nothing changed."""

    code = "aborted"


class CommitError(ApplyPatchError):
    """A commit step failed after earlier ones succeeded: the result is partial/unknown."""

    code = "commit-failed"
