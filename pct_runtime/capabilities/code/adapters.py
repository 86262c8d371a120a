"""Nested adapters: how `tools.<name>(...)` inside a cell reaches an existing executor.

An adapter has two steps so the manager can enforce the spec's order
(validation → queue → invocation hooks → Patch approval → executor):
`prepare` normalizes and validates the arguments with the tool's own rules and never
changes anything; `execute` runs the prepared call. Cancelling `execute` is a cell stop, so
shell adapters detach their poll and never stop the shell they were reading.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from pct_runtime.capabilities.apply_patch.errors import ApplyPatchError
from pct_runtime.capabilities.apply_patch.executor import prepare_patch
from pct_runtime.capabilities.apply_patch.preview import question_diffs
from pct_runtime.capabilities.apply_patch.tool import (
    PatchApprovalRequest,
    commit_prepared_async,
    patch_argument,
    to_tool_error,
    to_tool_result,
)
from pct_runtime.capabilities.base import CallContext, ToolError, ToolResult
from pct_runtime.capabilities.shell.dialect import (
    normalize_exec_command_args,
    normalize_write_stdin_args,
    resolve_workdir,
)
from pct_runtime.host.ui import AskedDiff
from pct_runtime.jsontypes import JSONMapping, JSONObject

if TYPE_CHECKING:
    from pct_runtime.capabilities.shell.gate import CommandGate
    from pct_runtime.capabilities.shell.manager import ShellManager

_log = logging.getLogger(__name__)


@dataclass
class PreparedCall:
    """A validated nested call.

    `session_id` (known for `write_stdin`) goes into the invocation call record and progress;
    `approval` is the ≤800-byte preview shown when the call needs nested Patch approval
    (`None` for calls that never ask).
    """

    tool: str
    args: Any
    session_id: str | None = None
    approval: str | None = None
    cwd: str | None = None
    #: The patch's per-file diffs against disk now (reads files: call in a thread).
    diffs: Callable[[], list[AskedDiff]] | None = None

    async def read_diffs(self) -> tuple[AskedDiff, ...]:
        """The diffs for the approval question, read in a thread; () when the call has none
        or they cannot be read (the question still goes out, with its preview text)."""
        if self.diffs is None:
            return ()
        try:
            return tuple(await asyncio.to_thread(self.diffs))
        except Exception:
            _log.warning("diffs for a nested patch approval failed", exc_info=True)
            return ()


class CodeAdapter(Protocol):
    @property
    def name(self) -> str: ...

    @property
    def sequential(self) -> bool: ...

    async def prepare(self, args: JSONMapping, ctx: CallContext) -> PreparedCall: ...

    async def execute(self, prepared: PreparedCall, ctx: CallContext) -> ToolResult: ...


def nested_details(result: ToolResult) -> JSONObject:
    """The value a cell receives: the same details MCP carries in `_meta["pct/details"]`."""
    details = dict(result.details)
    if "text" not in details and "stdout" not in details:
        details["text"] = result.text  # shell details already carry stdout/stderr
    return details


class ApplyPatchAdapter:
    """Nested `apply_patch`: schema + full preflight before approval, commit after it."""

    name = "apply_patch"
    sequential = True

    async def prepare(self, args: JSONMapping, ctx: CallContext) -> PreparedCall:
        try:
            patch = patch_argument(args)
        except ToolError as exc:
            raise ToolError("invalid-arguments", exc.message, exc.details) from None
        try:
            prepared = await asyncio.to_thread(prepare_patch, patch, ctx.cwd)
        except ApplyPatchError as exc:
            raise to_tool_error(exc) from None
        preview = PatchApprovalRequest(prepared.summary, patch, prepared.cwd, ctx).preview()
        return PreparedCall(
            self.name,
            prepared,
            approval=preview,
            diffs=lambda: question_diffs(prepared),
        )

    async def execute(self, prepared: PreparedCall, ctx: CallContext) -> ToolResult:
        # A stop cannot take back a rename already in flight: the commit stops at its next
        # abort check and is awaited, so the effect is settled before we return.
        try:
            result = await commit_prepared_async(prepared.args, ctx.patch_witness, ctx.patch_locks)
        except ApplyPatchError as exc:
            raise to_tool_error(exc) from None
        return to_tool_result(result)


def _as_invalid(exc: ToolError) -> ToolError:
    details = dict(exc.details)
    details.setdefault("toolCode", exc.code)
    return ToolError("invalid-arguments", exc.message, details)


class ExecCommandAdapter:
    """Nested `exec_command` through the session's one `ShellManager`.

    Runs with path "nested": cancelling the call (a cell stop) ends the poll, never the job.
    """

    name = "exec_command"
    sequential = False

    def __init__(self, manager: ShellManager, gate: CommandGate | None = None) -> None:
        self._manager = manager
        self._gate = gate

    async def prepare(self, args: JSONMapping, ctx: CallContext) -> PreparedCall:
        try:
            parsed = normalize_exec_command_args(args)
            workdir = resolve_workdir(ctx.cwd, parsed.workdir)
        except ToolError as exc:
            raise _as_invalid(exc) from None
        return PreparedCall(self.name, (parsed, workdir), cwd=str(workdir))

    async def execute(self, prepared: PreparedCall, ctx: CallContext) -> ToolResult:
        parsed, workdir = prepared.args
        if self._gate is not None:
            await self._gate.check(parsed.command, ctx)  # the same policy as a direct call
        # `workdir` is already resolved against the cell's cwd; hand the manager the resolved
        # directory as its base and no relative workdir, so it is not resolved a second time.
        return await self._manager.start(
            dataclasses.replace(parsed, workdir=None),
            cwd=workdir,
            env_overlay=ctx.env_overlay,
            path="nested",
        )


class WriteStdinAdapter:
    """Nested `write_stdin` through the same `ShellManager`; a cell stop ends only the poll."""

    name = "write_stdin"
    sequential = False

    def __init__(self, manager: ShellManager) -> None:
        self._manager = manager

    async def prepare(self, args: JSONMapping, ctx: CallContext) -> PreparedCall:
        try:
            parsed = normalize_write_stdin_args(args)
        except ToolError as exc:
            raise _as_invalid(exc) from None
        self._manager.check_session(parsed.session_id)  # stale/unknown: the Shell's own error
        return PreparedCall(self.name, parsed, session_id=parsed.session_id)

    async def execute(self, prepared: PreparedCall, ctx: CallContext) -> ToolResult:
        return await self._manager.write(prepared.args, path="nested")


def create_adapters(
    shell: ShellManager | None = None,
    *,
    apply_patch: bool = True,
    gate: CommandGate | None = None,
) -> list[CodeAdapter]:
    """The standard adapters: the shell pair over the one `ShellManager` (nested
    `exec_command` judged by the session's command `gate`), and Apply Patch."""
    adapters: list[CodeAdapter] = []
    if shell is not None:
        adapters += [ExecCommandAdapter(shell, gate), WriteStdinAdapter(shell)]
    if apply_patch:
        adapters.append(ApplyPatchAdapter())
    return adapters
