"""Every way `apply_patch` refuses or fails, as one exception family.

`str(error)` is always the exact model-facing text; `code` is the machine-readable reason the
tool maps onto `ToolError.code`. Kept free of imports so the CLI path stays light.
"""

from __future__ import annotations

TYPE_CHECKING = False  # `typing` stays unloaded on `pct apply-patch`
if TYPE_CHECKING:
    from pct_runtime.jsontypes import JSONObject

#: How every rejection (nothing written) ends, so the model never has to guess.
NOTHING_CHANGED = "Nothing was changed."
#: A mismatch quotes the lines it looked for last, so it says so just before them.
EXPECTED_LINES = NOTHING_CHANGED + " Expected lines:\n"


def says_nothing_changed(message: str) -> str:
    """`message` ending with `Nothing was changed.` (unless it already says so, or says it
    before the quoted `Expected lines:` block that must stay last).

    A message without final punctuation (Codex's `Invalid patch: The first line of the
    patch must be '*** Begin Patch'`) gets a period first, so Codex's text stays a prefix.
    """
    if message.endswith(NOTHING_CHANGED) or EXPECTED_LINES in message:
        return message
    return message + (" " if message.endswith((".", "?", "!")) else ". ") + NOTHING_CHANGED


class ApplyPatchError(Exception):
    code = "apply-patch-failed"
    #: Rejections raised before any write: their text always ends with `NOTHING_CHANGED`.
    rejection = False

    def __init__(self, message: str, *, line: int | None = None, details: JSONObject | None = None):
        if self.rejection:
            message = says_nothing_changed(message)
        super().__init__(message)
        self.message = message
        self.line = line
        self.details: JSONObject = dict(details or {})

    def __str__(self) -> str:
        return self.message


class PatchSyntaxError(ApplyPatchError, ValueError):
    """The envelope or a section is malformed, or a path is not allowed. Nothing changed."""

    code = "invalid-patch"
    rejection = True


class PathConflictError(PatchSyntaxError):
    """Two sections name one file, or a file and its ancestor directory (not expressible in
    the grammar, so tests tell these apart from grammar-level rejections)."""


class MatchError(ApplyPatchError, ValueError):
    """A hunk does not match the current file (missing or ambiguous). Nothing changed."""

    code = "patch-mismatch"
    rejection = True


class PreflightError(ApplyPatchError):
    """A filesystem check failed before any change (missing file, symlink, encoding…)."""

    code = "patch-rejected"
    rejection = True


class PatchAbortedError(ApplyPatchError):
    """Cancelled before the first commit step. Nothing changed."""

    code = "aborted"


class CommitError(ApplyPatchError):
    """A commit step failed after earlier ones succeeded: the result is partial/unknown."""

    code = "commit-failed"
