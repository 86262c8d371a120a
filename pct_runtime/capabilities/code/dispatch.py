"""Nested calls: how a cell's `tools.<name>(...)` request becomes an executor call and a reply.

Order of one dispatch: declared and admitted at dispatch → the tool's own validation → a
concurrency slot (4, Patch sequential) → recheck → invocation hooks (path "nested") →
recheck → Patch approval (mode `confirm`) → recheck → executor. Every recheck stops a call
the cell (stopping), the manager (closed) or admission (live config) no longer allows.

Bridge accounting per cell: at most 16 outstanding requests and 256 KiB of outstanding
argument bytes; one payload (arguments or reply) is at most 256 KiB. A reply too large to
hand back keeps only its control fields: the effect happened and must not be rerun.
Progress records (≤32 per observing call) carry names, ids and outcomes, never arguments.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable, Iterable
from dataclasses import replace

from pct_runtime.capabilities.base import CallContext, ToolError
from pct_runtime.capabilities.code.adapters import CodeAdapter, PreparedCall, nested_details
from pct_runtime.capabilities.code.bridge import PAYLOAD_BYTES, encode_json
from pct_runtime.capabilities.code.cell import Cell
from pct_runtime.capabilities.code.dialect import ADAPTER_NAMES
from pct_runtime.capabilities.code.render import CLOSED_MESSAGE
from pct_runtime.host.ui import Answering, Question, UIUnavailableError, answering
from pct_runtime.invocation import InvocationCall, InvocationHooks, invoke_hooks
from pct_runtime.jsontypes import JSONMapping, JSONObject
from pct_runtime.output import truncate_text

ADAPTER_SLOTS = 4
MAX_OUTSTANDING = 16
MAX_OUTSTANDING_BYTES = 256 * 1024
PROGRESS_PER_CALL = 32
PROGRESS_FIELD_BYTES = 128

#: What an over-large reply keeps: enough to continue (session, status, recovery) without
#: rerunning the call.
_CONTROL_FIELDS = (
    "session_id",
    "status",
    "exit_code",
    "recovery",
    "unknown_outcome",
    "operations",
)


class NestedDispatcher:
    """Admission, slots, hooks, approval and replies for the nested calls of every cell.

    `adapters` is shared with the manager (same dict). `admitted()`: the adapter names
    admitted right now; `None` admits every adapter. `refusal(name)`: the exact text a direct
    call to `name` gets when it is not admitted, or None. `approval_mode()`: `"confirm"` or
    `"always"`. `closed()`: whether the manager is closed.
    """

    def __init__(
        self,
        adapters: dict[str, CodeAdapter],
        *,
        admitted: Callable[[], Iterable[str]] | None,
        refusal: Callable[[str], str | None] | None,
        approval_mode: Callable[[], str] | str,
        hooks: InvocationHooks | None,
        closed: Callable[[], bool],
    ) -> None:
        self._adapters = adapters
        self._admitted = admitted
        self._refusal = refusal
        self._approval_mode = approval_mode
        self._hooks = hooks
        self._closed = closed
        self._slots = asyncio.Semaphore(ADAPTER_SLOTS)
        self._patch_lock = asyncio.Lock()

    # -- admission --------------------------------------------------------------------------
    def admitted_now(self) -> set[str]:
        if self._admitted is None:
            return set(self._adapters)
        return {n for n in self._admitted() if n in self._adapters}

    def _not_admitted(self, cell: Cell, name: str, *, earlier: bool = False) -> ToolError:
        """`adapter-disabled` for a real adapter the session does not admit, with the cause."""
        reason: str | None = None
        if self._refusal is not None:
            with contextlib.suppress(Exception):
                reason = self._refusal(name)
        if reason:
            cause = reason.strip().rstrip(".")
        else:
            cause = (
                "its capability is off, routed elsewhere or its name is owned by another tool; "
                "see `pct status`"
            )
        when = "no longer" if earlier or name in cell.admitted_at_start else "not"
        return ToolError(
            "adapter-disabled",
            f"tools.{name} is {when} admitted in this session ({cause}); nothing ran.",
        )

    def _undispatchable(self, cell: Cell, name: str) -> ToolError:
        """The refusal for a call to a name that is not declared or not admitted.

        Declared but not admitted, and neither declared nor admitted, both name the
        admission cause (declaring the name would not help); admitted but not declared
        says how to declare it; a name that is no adapter at all lists the ones that exist.
        """
        if name not in ADAPTER_NAMES and name not in self._adapters:
            return ToolError(
                "unknown-adapter",
                f"tools.{name} is not a nested tool; only exec_command, write_stdin and "
                "apply_patch exist inside a cell. Nothing ran.",
            )
        if name not in self.admitted_now():
            return self._not_admitted(cell, name)
        declared = ", ".join(sorted(cell.declared)) or "none"
        return ToolError(
            "unknown-adapter",
            f"tools.{name} is not declared for this cell (declared: {declared}). List it in "
            "exec `uses`, or omit `uses` to declare every adapter admitted when the cell "
            "starts, in a new exec; nothing ran.",
        )

    def _recheck(self, cell: Cell, name: str, *, passed: bool = True) -> None:
        """Stop a dispatch the cell, the manager or admission no longer allows.

        `passed=False` for the first check of a dispatch: the name was not yet seen admitted.
        """
        if cell.fenced or cell.terminal.is_set():
            raise asyncio.CancelledError
        if self._closed():
            raise ToolError("closed", CLOSED_MESSAGE)
        if name not in self.admitted_now():
            raise self._not_admitted(cell, name, earlier=passed)

    def _direct(self, name: str) -> bool:
        """Whether the model can call `name` directly in this session (not only in a cell)."""
        if self._refusal is None:
            return True  # no session to ask: a standalone manager beside the direct tools
        with contextlib.suppress(Exception):
            return self._refusal(name) is None
        return False

    def _mode(self) -> str:
        mode = self._approval_mode
        return mode() if callable(mode) else mode

    # -- one call ---------------------------------------------------------------------------
    def on_call(self, cell: Cell, msg: JSONMapping) -> None:
        """A `c` frame from the cell: refuse it at once (fenced, over a bridge bound) or
        start its dispatch task, which the cell's fence can cancel."""
        call_id = msg.get("i")
        name = str(msg.get("n", ""))
        if cell.fenced:
            cell.counts.cancelled += 1
            _reply_error(cell, call_id, ToolError("aborted", "The cell is stopping; nothing ran."))
            return
        big = msg.get("big")
        args = msg.get("a")
        size = int(big) if isinstance(big, int) else len(encode_json(args))
        overload: str | None = None
        if size > PAYLOAD_BYTES:
            overload = f"the arguments are {size} bytes; one call may send at most {PAYLOAD_BYTES}"
        elif cell.outstanding >= MAX_OUTSTANDING:
            overload = f"{MAX_OUTSTANDING} nested calls are already outstanding in this cell"
        elif cell.outstanding_bytes + size > MAX_OUTSTANDING_BYTES:
            overload = (
                f"outstanding nested-call arguments would exceed {MAX_OUTSTANDING_BYTES} bytes"
            )
        if overload is not None:
            cell.counts.failed += 1
            _reply_error(
                cell,
                call_id,
                ToolError(
                    "bridge-overload",
                    f"tools.{name} was not sent: {overload}. Await earlier "
                    "calls or send smaller arguments; nothing ran.",
                ),
            )
            return
        cell.outstanding += 1
        cell.outstanding_bytes += size
        task = asyncio.get_running_loop().create_task(
            self._dispatch(cell, call_id, name, args if isinstance(args, dict) else {}, size)
        )
        cell.dispatches.add(task)
        task.add_done_callback(cell.dispatches.discard)

    async def _dispatch(
        self, cell: Cell, call_id: object, name: str, args: JSONObject, size: int
    ) -> None:
        dispatched = False
        session: str | None = None
        _progress(cell, name, "start")
        observer = cell.ctx.observer
        trace = observer.start(name, args, cell_id=cell.id) if observer is not None else None
        try:
            adapter = self._adapters.get(name)
            if adapter is None or name not in cell.declared:
                raise self._undispatchable(cell, name)
            self._recheck(cell, name, passed=False)
            nested_ctx = CallContext(
                cwd=cell.ctx.cwd,
                path="nested",
                session_id=cell.ctx.session_id,
                tool_call_id=f"{cell.ctx.tool_call_id}/{cell.id}/{call_id}",
                ui=cell.ctx.ui,
                cell_id=cell.id,
                patch_witness=trace.patch_witness if trace is not None else None,
                patch_locks=cell.ctx.patch_locks,
                observer=trace.nested() if trace is not None else None,
            )
            prepared: PreparedCall = await adapter.prepare(args, nested_ctx)
            session = prepared.session_id
            async with self._slots:
                lock = self._patch_lock if adapter.sequential else contextlib.nullcontext()
                async with lock:
                    self._recheck(cell, name)
                    call: InvocationCall = {
                        "tool": name,  # type: ignore[typeddict-item]
                        "path": "nested",
                        "cwd": prepared.cwd or str(cell.ctx.cwd),
                        "cellId": cell.id,
                    }
                    if session:
                        call["sessionId"] = session
                    env = await invoke_hooks(self._hooks, call)
                    self._recheck(cell, name)
                    if prepared.approval is not None and self._mode() != "always":
                        _progress(cell, name, "approval", **_sid(session))
                        await _approve(cell, name, prepared, direct=self._direct(name))
                        self._recheck(cell, name)
                    dispatched = True
                    cell.counts.unsettled += 1
                    result = await adapter.execute(prepared, replace(nested_ctx, env_overlay=env))
                    cell.counts.unsettled -= 1
                    dispatched = False  # settled: no longer an unknown effect
            if trace is not None:
                trace.finish(outcome="ok", text=result.text, details=result.details)
            details = nested_details(result)
            sid = details.get("session_id")
            if name in ("exec_command", "write_stdin") and isinstance(sid, str):
                session = sid
                running = details.get("status") == "running" or details.get("running") is True
                if running:
                    cell.shells[sid] = "running"
                else:
                    cell.shells.pop(sid, None)
            reply_size = len(encode_json(details))
            if reply_size > PAYLOAD_BYTES:
                # The effect happened; only the reply is too large to hand to the program.
                kept = {k: details[k] for k in _CONTROL_FIELDS if k in details}
                raise ToolError(
                    "bridge-overload",
                    f"tools.{name} ran, but its reply is {reply_size} bytes, above the "
                    f"{PAYLOAD_BYTES}-byte bound, so only its control fields are returned "
                    "(in details). Ask for less output (max_output_tokens) next time; do not "
                    "rerun it to see the output.",
                    kept,
                )
            cell.counts.completed += 1
            cell.channel.send({"t": "r", "i": call_id, "ok": True, "v": details})
            _progress(cell, name, "end", ok=True, **_sid(session))
        except ToolError as exc:
            if trace is not None:  # no-op when the call itself succeeded (reply too big)
                trace.finish(outcome="error", error_code=exc.code, text=exc.message)
            if dispatched:
                cell.counts.unsettled -= 1
            cell.counts.failed += 1
            _reply_error(cell, call_id, exc)
            _progress(cell, name, "end", ok=False, code=exc.code, **_sid(session))
        except asyncio.CancelledError:
            if trace is not None:
                trace.finish(outcome="cancelled", error_code="aborted")
            if not dispatched:
                cell.counts.cancelled += 1
            # a dispatched call stays counted as unsettled: its effect is unknown
            _progress(cell, name, "end", ok=False, code="aborted", **_sid(session))
        except Exception as exc:  # an executor bug must not hang the cell
            if trace is not None:
                trace.finish(outcome="error", error_code="unavailable", text=repr(exc))
            if dispatched:
                cell.counts.unsettled -= 1
            cell.counts.failed += 1
            _reply_error(
                cell,
                call_id,
                ToolError("unavailable", f"tools.{name} failed unexpectedly: {exc}"),
            )
            _progress(cell, name, "end", ok=False, code="unavailable", **_sid(session))
        finally:
            cell.outstanding -= 1
            cell.outstanding_bytes -= size


async def _approve(cell: Cell, name: str, prepared: PreparedCall, *, direct: bool) -> None:
    """Ask the user of the calling tool call before a nested Patch; refuse without a UI.

    While the question is pending the cell lists it (a yielded read says who was asked).
    """
    ui = cell.ctx.ui
    unavailable = ToolError("approval-unavailable", unavailable_message(name, direct=direct))
    if not ui.available:
        raise unavailable
    preview, _ = truncate_text(prepared.approval or "", 800)
    question = Question("Code Mode: apply patch?", preview, diffs=await prepared.read_diffs())
    pending: tuple[str, Answering] | None = None
    try:
        with answering() as note:
            pending = (name, note)
            cell.approvals.append(pending)
            ok = await ui.confirm(question)
    except UIUnavailableError:
        raise unavailable from None
    finally:
        if pending is not None:
            cell.approvals.remove(pending)
    if not ok:
        raise ToolError(
            "approval-denied", denied_message(name, note), {"approval": note.to_details()}
        )


def unavailable_message(name: str, *, direct: bool) -> str:
    """No one can be asked. The direct tool is suggested only where the session shows it:
    execution rules may route Patch through Code Mode only."""
    head = (
        f"Nested {name} needs the user's approval, but no interactive UI can ask in this "
        "session. Nothing was changed. "
    )
    if direct:
        return head + (
            f"Call {name} directly (not from a cell), or ask the user to set Code Mode "
            "approval to always."
        )
    return head + (
        f"{name} is available only inside Code Mode here, so ask the user to open the pct "
        "console (pct-tui) to approve nested patches, or to set Code Mode approval to always, "
        "then retry."
    )


def denied_message(name: str, note: Answering) -> str:
    """The model-facing refusal: who said no, as far as pct can tell, and what to do next.

    MCP clients answer `decline` both for a person and for themselves (`codex exec` has no
    one to ask), so only an answer too fast for any person says that nobody was asked.
    """
    if note.route == "console":
        return (
            f"The user declined the nested {name} in the pct console. Nothing was changed; "
            "do not retry it without asking the user."
        )
    if note.route != "elicitation":
        return (
            f"The nested {name} was not approved. Nothing was changed; do not retry it "
            "without asking the user."
        )
    return note.client_refusal(
        f"the approval request for the nested {name}",
        later=(
            "Nothing was changed. Ask the user to open the pct console (pct-tui) to approve "
            "nested patches, or to set Code Mode approval to always, then retry."
        ),
        settled="Nothing was changed; do not retry it without asking the user.",
    )


def _reply_error(cell: Cell, call_id: object, error: ToolError) -> None:
    cell.channel.send(
        {
            "t": "r",
            "i": call_id,
            "ok": False,
            "code": error.code,
            "m": error.message,
            "d": error.details,
        }
    )


def _progress(cell: Cell, adapter: str, phase: str, **extra: object) -> None:
    """One progress record to the observing call's sink, bounded per call and per field."""
    sink = cell.progress
    if sink is None or cell.progress_count >= PROGRESS_PER_CALL:
        return
    cell.progress_count += 1
    record: JSONObject = {"kind": "code-mode-nested-call", "phase": phase}
    fields = {"adapter": adapter, "cell_id": cell.id, **extra}
    for key, value in fields.items():
        if isinstance(value, str):
            value, _ = truncate_text(value, PROGRESS_FIELD_BYTES)
        record[key] = value
    with contextlib.suppress(Exception):
        sink(record)


def _sid(session: str | None) -> dict[str, str]:
    return {"session_id": session} if session else {}
