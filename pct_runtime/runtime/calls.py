"""The call pipeline: every tool call, direct or from a Code Mode cell, takes these steps.

1. trace: the journal row starts, so a refused call is journaled too;
2. admit: the path's admission (the session's projection and start fence for a direct
   call, the cell's declared and admitted adapters for a nested one);
3. prepare: the tool normalizes and validates its arguments and says what a person must
   approve; nothing has changed yet;
4. hold: a sequential tool's lock, Code Mode's adapter slots; then recheck;
5. invocation hooks (shell and patch tools only): the embedder's `context` and `policy`
   see the normalized call; then recheck;
6. approval: when the prepared call carries a question and the path asks (a command
   policy's question is asked on every path), the routed UI asks a person; no one to ask
   is `approval-unavailable`, a no is `approval-denied`; then recheck;
7. execute, and the journal row finishes with the outcome.

A recheck stops a call whose capability was disabled, whose session was replaced or whose
cell stopped while an earlier step awaited. The path's own pieces come from its `CallGate`
(`capabilities.base`); this module is the only caller of `invoke_hooks`.
"""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import Mapping
from pathlib import Path
from typing import get_args

from pct_runtime.capabilities.base import (
    Approval,
    CallContext,
    CallGate,
    CallObservation,
    Prepared,
    Tool,
    ToolError,
    ToolResult,
)
from pct_runtime.host.ui import AskedDiff, Question, UIUnavailableError, answering
from pct_runtime.invocation import InvocationCall, InvocationHooks, InvocationTool, invoke_hooks
from pct_runtime.jsontypes import JSONMapping

_log = logging.getLogger(__name__)

#: The names the invocation hooks see (`invocation.InvocationTool`, the one list).
HOOKED_TOOLS: frozenset[str] = frozenset(get_args(InvocationTool))

#: The tools a Code Mode cell may reach (`tools.<name>`), when the session has them.
NESTED_TOOLS: frozenset[str] = HOOKED_TOOLS

#: How an outcome other than a `ToolError` is journaled, per path: a direct call's task is
#: cancelled by its client, a nested one by its cell's stop.
_CANCELLED = {"direct": "cancelled", "nested": "aborted"}
_FAILED = {"direct": "internal-error", "nested": "unavailable"}


class CallPipeline:
    """The pipeline over one session's tools; `call` runs one call through a gate.

    `tools` is the name → tool table the calls resolve in (a session fills it while its
    capabilities bind); `nested` the tools a Code Mode cell may reach, a separate table
    because a foreign tool that wins a direct name is never reached from a cell.
    """

    def __init__(
        self,
        tools: Mapping[str, Tool],
        *,
        hooks: InvocationHooks | None = None,
        nested: Mapping[str, Tool] | None = None,
    ) -> None:
        self.tools = tools
        self.nested = tools if nested is None else nested
        self.hooks = hooks

    def nested_names(self) -> frozenset[str]:
        return frozenset(name for name in self.nested if name in NESTED_TOOLS)

    async def call(self, name: str, args: JSONMapping, gate: CallGate) -> ToolResult:
        trace = gate.trace(name, args)
        if trace is None:
            return await self._run(name, args, gate, None)
        try:
            result = await self._run(name, args, gate, trace)
        except ToolError as exc:
            trace.finish(outcome="error", error_code=exc.code, text=exc.message)
            raise
        except asyncio.CancelledError:
            trace.finish(outcome="cancelled", error_code=_CANCELLED[gate.path])
            raise
        except Exception as exc:
            trace.finish(outcome="error", error_code=_FAILED[gate.path], text=repr(exc))
            raise
        trace.finish(outcome="ok", text=result.text, details=result.details)
        return result

    async def _run(
        self, name: str, args: JSONMapping, gate: CallGate, trace: CallObservation | None
    ) -> ToolResult:
        gate.admit(name)
        table = self.nested if gate.path == "nested" else self.tools
        tool = table.get(name) or self.tools[name]  # admitted: one of the two has it
        ctx = gate.context(trace)
        with gate.running(name, ctx):
            prepared = await tool.prepare(dict(args), ctx)
            async with gate.hold(tool, prepared):
                gate.recheck(name)
                env = await self._hooks(name, args, prepared, ctx, gate)
                if env is not None:
                    ctx.env_overlay = env
                await self._approve(name, prepared, ctx, gate)
                gate.executing()
                try:
                    result = await tool.execute(prepared, ctx)
                except asyncio.CancelledError:
                    raise  # the effect's outcome is unknown: it stays unsettled
                except Exception:
                    gate.settled()
                    raise
                gate.settled()
                return result

    async def _hooks(
        self, name: str, args: JSONMapping, prepared: Prepared, ctx: CallContext, gate: CallGate
    ) -> Mapping[str, str] | None:
        """The invocation hooks, on the normalized call; the one caller of `invoke_hooks`."""
        hooks = self.hooks
        if name not in HOOKED_TOOLS or hooks is None or hooks.empty:
            return None
        cwd = prepared.cwd if prepared.cwd is not None else _hook_cwd(name, args, ctx.cwd)
        record: InvocationCall = {
            "tool": name,  # type: ignore[typeddict-item]  # narrowed by HOOKED_TOOLS
            "path": gate.path,
            "cwd": str(cwd),
        }
        if ctx.cell_id is not None:
            record["cellId"] = ctx.cell_id
        if prepared.session_id:
            record["sessionId"] = prepared.session_id
        env = await invoke_hooks(hooks, record)
        gate.recheck(name)  # a hook may have awaited: admission is read again
        return env

    async def _approve(
        self, name: str, prepared: Prepared, ctx: CallContext, gate: CallGate
    ) -> None:
        """The approval step: ask a person through the routed UI when the path asks."""
        approval = prepared.approval
        if approval is None or not gate.asks(name, approval):
            return
        answers = approval.answers

        def unavailable() -> ToolError:
            if answers is not None:
                return answers.unavailable()  # the asker's own refusal, recorded by it
            return ToolError("approval-unavailable", gate.unavailable(name))

        if not ctx.ui.available:
            raise unavailable()
        question = await _question(approval)
        ok, picked = False, None
        try:
            with answering() as note, gate.asking(name, note):
                if answers is None:
                    ok = await ctx.ui.confirm(question)
                else:
                    picked = await ctx.ui.select(question)
        except UIUnavailableError:
            raise unavailable() from None
        if answers is not None:
            answers.answered(picked, note)  # raises unless the answer lets it run
        elif not ok:
            raise ToolError(
                "approval-denied", gate.denied(name, note), {"approval": note.to_details()}
            )
        gate.recheck(name)


async def _question(approval: Approval) -> Question:
    """The question with the diffs read in a thread; without them when they cannot be read
    (the question still goes out, with its preview text)."""
    diffs: tuple[AskedDiff, ...] = ()
    if approval.diffs is not None:
        try:
            diffs = tuple(await asyncio.to_thread(approval.diffs))
        except Exception:
            _log.warning("diffs for an approval question failed", exc_info=True)
    options = approval.answers.options if approval.answers is not None else ()
    return Question(approval.title, approval.preview, options=options, diffs=diffs)


def _hook_cwd(name: str, args: JSONMapping, cwd: Path) -> Path:
    """The directory a one-phase tool on a hooked name runs in, as the hooks are told."""
    if name == "exec_command":
        raw = args.get("workdir", args.get("cwd"))
        if isinstance(raw, str) and raw:
            return (cwd / os.path.expanduser(raw)).resolve()
    return cwd
