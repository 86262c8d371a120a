"""The `apply_patch` tool: one `patch` string in, `Applied patch:` out.

Blocking filesystem work runs in a worker thread. `prepare` validates the arguments; for
a call from a Code Mode cell it also runs every check that can run before a change and
returns the approval question (the operations, the patch text, the diffs), which the
runtime's call pipeline asks before `execute` writes anything. A direct call is read after
the invocation hooks, in `execute`. Whether the tool is enabled at all is decided by the
runtime before it calls us.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from pct_runtime.capabilities.apply_patch.errors import ApplyPatchError
from pct_runtime.capabilities.apply_patch.executor import (
    ApplyResult,
    OperationSummary,
    PreparedPatch,
    commit_prepared,
    prepare_patch,
)
from pct_runtime.capabilities.apply_patch.grammar import grammar_text
from pct_runtime.capabilities.apply_patch.preview import question_diffs
from pct_runtime.capabilities.base import (
    Approval,
    CallContext,
    PatchWitness,
    Prepared,
    ToolError,
    ToolResult,
    ToolSpec,
    run_once,
)
from pct_runtime.jsontypes import JSONMapping

TOOL_NAME = "apply_patch"
TOOL_LABEL = "Apply Patch"
GRAMMAR_META_KEY = "pct/grammar"
APPROVAL_PREVIEW_BYTES = 800
APPROVAL_TITLE = "Code Mode: apply patch?"

MINIMAL_ENVELOPE = "*** Begin Patch\n*** Add File: notes/todo.md\n+first line\n*** End Patch"

DESCRIPTION = "\n".join(
    [
        "Edit files under the working directory with a patch, sent whole as the `patch` "
        "string. Minimal example, exactly as it must look:",
        "",
        MINIMAL_ENVELOPE,
        "",
        "Sections, any number, in order:",
        "*** Add File: <path> — then every line of the new file, each prefixed with '+'.",
        "*** Delete File: <path> — nothing follows.",
        "*** Update File: <path> — optionally followed by '*** Move to: <new path>', then "
        "hunks (with '*** Move to:' and no hunk, the file is only renamed, unchanged). A hunk "
        "starts with '@@', or '@@ <exact text of a line of the file>' (such as the enclosing "
        "function or class) to jump past it; several '@@ <line>' in a row narrow further. "
        "Each hunk line starts with ' ' (context), '-' (removed) or '+' (added); a bare empty "
        "line is an empty context line. Show about 3 lines of context around each change. End "
        "the final hunk with '*** End of File' when it must match the end of the file.",
        "",
        "Rules:",
        "- Use real newlines (U+000A), never the two characters backslash and n; no Markdown "
        "fences or quotes around the patch.",
        "- First line exactly '*** Begin Patch', last exactly '*** End Patch'; nothing before "
        "or after, no marker like '*** Begin Patch ***'.",
        "- No carriage return (CR) in the patch; CRLF files still match and keep CRLF.",
        "- Paths are relative to the working directory: no absolute paths, no '..', no "
        "symbolic links. Add File and Move to need a path that does not exist yet.",
        "- Files to update or delete must be UTF-8 text with one line-ending style, all LF "
        "or all CRLF; deleting binary files is not supported (a rename moves any file).",
        "- Context must match exactly one place (surrounding whitespace and typographic "
        "punctuation may differ).",
        "- Every hunk adds or removes at least one line. A hunk of only '+' lines needs an "
        "anchor: after '@@ <line>' the lines are inserted right after that line; ending with "
        "'*** End of File' appends them at the end of the file.",
        "- A rejected patch changes nothing: fix what the error says and send the corrected patch.",
    ]
)

PATCH_PARAMETER_DESCRIPTION = (
    "The whole patch, from the line '*** Begin Patch' to the line '*** End Patch', with real "
    "newlines."
)

INPUT_SCHEMA: JSONMapping = {
    "type": "object",
    "properties": {"patch": {"type": "string", "description": PATCH_PARAMETER_DESCRIPTION}},
    "required": ["patch"],
    "additionalProperties": False,
}


@dataclass(frozen=True)
class PatchApprovalRequest:
    """What an approver sees: the validated operations, the patch text and the call context."""

    operations: tuple[OperationSummary, ...]
    patch: str
    cwd: str
    ctx: CallContext

    def preview(self, limit: int = APPROVAL_PREVIEW_BYTES) -> str:
        """Operations list, then as much of the patch as fits in `limit` UTF-8 bytes."""
        head = "\n".join(op.text for op in self.operations)
        text = f"{head}\n\n{self.patch}"
        data = text.encode("utf-8")
        if len(data) <= limit:
            return text
        cut = data[: max(0, limit - len("…".encode()))].decode("utf-8", errors="ignore")
        return cut + "…"


def apply_patch_spec() -> ToolSpec:
    return ToolSpec(
        name=TOOL_NAME,
        label=TOOL_LABEL,
        description=DESCRIPTION,
        input_schema=INPUT_SCHEMA,
        meta={GRAMMAR_META_KEY: {"syntax": "lark", "definition": grammar_text()}},
        sequential=True,
    )


def patch_argument(args: JSONMapping | str) -> str:
    """Validate the arguments against the schema; return the patch text or raise ToolError."""
    if isinstance(args, str):
        return args
    if not isinstance(args, Mapping):
        raise ToolError(
            "invalid-arguments",
            "apply_patch takes an object with one string field, 'patch', holding the whole "
            "patch envelope. Nothing was changed.",
        )
    extra = sorted(str(key) for key in args if key != "patch")
    if extra:
        raise ToolError(
            "invalid-arguments",
            f"apply_patch accepts only the 'patch' argument; remove: {', '.join(extra)}. "
            "Nothing was changed.",
        )
    patch = args.get("patch")
    if not isinstance(patch, str):
        raise ToolError(
            "invalid-arguments",
            "apply_patch requires 'patch' to be a string holding the whole patch envelope, "
            "from '*** Begin Patch' to '*** End Patch'. Nothing was changed.",
        )
    return patch


def to_tool_error(error: ApplyPatchError) -> ToolError:
    details = dict(error.details)
    if error.line is not None:
        details["line"] = error.line
    return ToolError(error.code, error.message, details)


def to_tool_result(result: ApplyResult) -> ToolResult:
    return ToolResult(text=result.text, details=result.details)


async def prepare_patch_async(patch: str, cwd: str | Path) -> PreparedPatch:
    """`prepare_patch` in a worker thread (reads only). Raises `ApplyPatchError`."""
    return await asyncio.to_thread(prepare_patch, patch, cwd)


async def commit_prepared_async(
    prepared: PreparedPatch, witness: PatchWitness | None = None, locks: Path | None = None
) -> ApplyResult:
    """Commit in a worker; a cancellation stops it at the next abort check and waits for it.

    If the worker was already past its last abort check, the commit completes and the
    cancellation is still raised: the caller must treat the outcome as unknown.
    """
    abort = threading.Event()
    task = asyncio.ensure_future(
        asyncio.to_thread(commit_prepared, prepared, abort.is_set, witness, locks)
    )
    try:
        return await asyncio.shield(task)
    except asyncio.CancelledError:
        abort.set()
        while not task.done():
            try:
                await asyncio.shield(task)
            except asyncio.CancelledError:
                continue
            except Exception:  # the worker's own outcome no longer matters: we were cancelled
                break
        raise


@dataclass(frozen=True)
class PatchCall:
    """A prepared `apply_patch`: the patch text, and its preflight once it was read."""

    patch: str
    preflight: PreparedPatch | None = None


class ApplyPatchTool:
    """Implements the `Tool` protocol."""

    def __init__(self) -> None:
        self._spec = apply_patch_spec()

    @property
    def spec(self) -> ToolSpec:
        return self._spec

    async def prepare(self, args: JSONMapping, ctx: CallContext) -> Prepared:
        patch = patch_argument(args)
        if ctx.path != "nested":
            # The hooks see the call before the patch is read; `execute` reads it.
            return Prepared(PatchCall(patch))
        try:
            preflight = await prepare_patch_async(patch, ctx.cwd)
        except ApplyPatchError as exc:
            raise to_tool_error(exc) from None
        preview = PatchApprovalRequest(preflight.summary, patch, preflight.cwd, ctx).preview()
        approval = Approval(APPROVAL_TITLE, preview, lambda: question_diffs(preflight))
        return Prepared(PatchCall(patch, preflight), approval=approval)

    async def execute(self, prepared: Prepared, ctx: CallContext) -> ToolResult:
        call = prepared.args
        assert isinstance(call, PatchCall)
        try:
            preflight = call.preflight or await prepare_patch_async(call.patch, ctx.cwd)
            # A stop cannot take back a rename already in flight: the commit stops at its
            # next abort check and is awaited, so the effect is settled before we return.
            result = await commit_prepared_async(preflight, ctx.patch_witness, ctx.patch_locks)
        except ApplyPatchError as exc:
            raise to_tool_error(exc) from None
        return to_tool_result(result)

    async def __call__(self, args: JSONMapping, ctx: CallContext) -> ToolResult:
        return await run_once(self, args, ctx)


def create_apply_patch_tool() -> ApplyPatchTool:
    """The `apply_patch` tool."""
    return ApplyPatchTool()
