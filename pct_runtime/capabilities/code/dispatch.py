"""Nested calls: how a cell's `tools.<name>(...)` request becomes an executor call and a reply.

A dispatch runs through the runtime's call pipeline (`NestedCalls`) with this module's
`NestedGate` as its path: declared and admitted at dispatch → the tool's own validation →
a concurrency slot (4, Patch sequential) → recheck → invocation hooks (path "nested") →
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
from collections.abc import AsyncIterator, Callable, Iterable, Iterator
from dataclasses import dataclass

from pct_runtime.capabilities.base import (
    Approval,
    CallContext,
    CallObservation,
    CallPath,
    NestedCalls,
    Prepared,
    Tool,
    ToolError,
    ToolResult,
)
from pct_runtime.capabilities.code.bridge import PAYLOAD_BYTES, encode_json
from pct_runtime.capabilities.code.cell import Cell
from pct_runtime.capabilities.code.dialect import ADAPTER_NAMES
from pct_runtime.capabilities.code.render import CLOSED_MESSAGE
from pct_runtime.host.ui import Answering
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


def nested_details(result: ToolResult) -> JSONObject:
    """The value a cell receives: the same details MCP carries in `_meta["pct/details"]`."""
    details = dict(result.details)
    if "text" not in details and "stdout" not in details:
        details["text"] = result.text  # shell details already carry stdout/stderr
    return details


class NestedDispatcher:
    """Bridge accounting, admission and replies for the nested calls of every cell; the
    call itself runs through the runtime's pipeline (`calls`).

    `admitted()`: the adapter names admitted right now; `None` admits every tool `calls`
    reaches. `refusal(name)`: the exact text a direct call to `name` gets when it is not
    admitted, or None. `approval_mode()`: `"confirm"` or `"always"`. `closed()`: whether
    the manager is closed.
    """

    def __init__(
        self,
        calls: NestedCalls,
        *,
        admitted: Callable[[], Iterable[str]] | None,
        refusal: Callable[[str], str | None] | None,
        approval_mode: Callable[[], str] | str,
        closed: Callable[[], bool],
    ) -> None:
        self.calls = calls
        self._admitted = admitted
        self._refusal = refusal
        self._approval_mode = approval_mode
        self._closed = closed
        self.slots = asyncio.Semaphore(ADAPTER_SLOTS)
        self.patch_lock = asyncio.Lock()
        #: The cell whose sequential call holds `patch_lock` (a queued read names it).
        self._patch_holder: Cell | None = None

    # -- admission --------------------------------------------------------------------------
    @contextlib.asynccontextmanager
    async def turn(self, cell: Cell, name: str, *, sequential: bool) -> AsyncIterator[None]:
        """Patch calls run one at a time; one waiting lists itself on its cell meanwhile, so
        a read says what it waits for instead of only "(no output)"."""
        if not sequential:
            yield
            return
        waiting = (name, lambda: self._patch_holder)
        cell.queued.append(waiting)
        try:
            async with self.patch_lock:
                cell.queued.remove(waiting)
                self._patch_holder = cell
                try:
                    yield
                finally:
                    self._patch_holder = None
        finally:
            if waiting in cell.queued:
                cell.queued.remove(waiting)

    def admitted_now(self) -> set[str]:
        names = self.calls.nested_names()
        if self._admitted is None:
            return set(names)
        return {n for n in self._admitted() if n in names}

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

    def undispatchable(self, cell: Cell, name: str) -> ToolError:
        """The refusal for a call to a name that is not declared or not admitted.

        Declared but not admitted, and neither declared nor admitted, both name the
        admission cause (declaring the name would not help); admitted but not declared
        says how to declare it; a name that is no adapter at all lists the ones that exist.
        """
        if name not in ADAPTER_NAMES and name not in self.calls.nested_names():
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

    def recheck(self, cell: Cell, name: str, *, passed: bool = True) -> None:
        """Stop a dispatch the cell, the manager or admission no longer allows.

        `passed=False` for the first check of a dispatch: the name was not yet seen admitted.
        """
        if cell.fenced or cell.terminal.is_set():
            raise asyncio.CancelledError
        if self._closed():
            raise ToolError("closed", CLOSED_MESSAGE)
        if name not in self.admitted_now():
            raise self._not_admitted(cell, name, earlier=passed)

    def direct(self, name: str) -> bool:
        """Whether the model can call `name` directly in this session (not only in a cell)."""
        if self._refusal is None:
            return True  # no session to ask: a standalone manager beside the direct tools
        with contextlib.suppress(Exception):
            return self._refusal(name) is None
        return False

    def mode(self) -> str:
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
        gate = NestedGate(self, cell, call_id)
        _progress(cell, name, "start")
        try:
            result = await self.calls.call(name, args, gate)
            details = nested_details(result)
            sid = details.get("session_id")
            if name in ("exec_command", "write_stdin") and isinstance(sid, str):
                gate.session = sid
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
            _progress(cell, name, "end", ok=True, **_sid(gate.session))
        except ToolError as exc:
            cell.counts.failed += 1
            _reply_error(cell, call_id, exc)
            _progress(cell, name, "end", ok=False, code=exc.code, **_sid(gate.session))
        except asyncio.CancelledError:
            if not gate.dispatched:
                cell.counts.cancelled += 1
            # a dispatched call stays counted as unsettled: its effect is unknown
            _progress(cell, name, "end", ok=False, code="aborted", **_sid(gate.session))
        except Exception as exc:  # an executor bug must not hang the cell
            cell.counts.failed += 1
            _reply_error(
                cell,
                call_id,
                ToolError("unavailable", f"tools.{name} failed unexpectedly: {exc}"),
            )
            _progress(cell, name, "end", ok=False, code="unavailable", **_sid(gate.session))
        finally:
            cell.outstanding -= 1
            cell.outstanding_bytes -= size


@dataclass
class NestedGate:
    """One nested call's path through the runtime's pipeline (`capabilities.base.CallGate`):
    the cell's journal row, context, admission, slots, approval and unsettled count."""

    dispatcher: NestedDispatcher
    cell: Cell
    call_id: object
    #: The shell session the call reads or started (progress records name it).
    session: str | None = None
    #: The effect started and has not settled: a stop leaves its outcome unknown.
    dispatched: bool = False

    @property
    def path(self) -> CallPath:
        return "nested"

    def trace(self, name: str, args: JSONMapping) -> CallObservation | None:
        observer = self.cell.ctx.observer
        return observer.start(name, args, cell_id=self.cell.id) if observer else None

    def context(self, trace: CallObservation | None) -> CallContext:
        parent = self.cell.ctx
        return CallContext(
            cwd=parent.cwd,
            path="nested",
            session_id=parent.session_id,
            tool_call_id=f"{parent.tool_call_id}/{self.cell.id}/{self.call_id}",
            ui=parent.ui,
            cell_id=self.cell.id,
            patch_witness=trace.patch_witness if trace is not None else None,
            patch_locks=parent.patch_locks,
        )

    def admit(self, name: str) -> None:
        if name not in self.cell.declared or name not in self.dispatcher.calls.nested_names():
            raise self.dispatcher.undispatchable(self.cell, name)
        self.dispatcher.recheck(self.cell, name, passed=False)

    def recheck(self, name: str) -> None:
        self.dispatcher.recheck(self.cell, name)

    def running(self, name: str, ctx: CallContext) -> contextlib.nullcontext[None]:
        return contextlib.nullcontext()

    @contextlib.asynccontextmanager
    async def hold(self, tool: Tool, prepared: Prepared) -> AsyncIterator[None]:
        self.session = prepared.session_id
        async with (
            self.dispatcher.slots,
            self.dispatcher.turn(self.cell, tool.spec.name, sequential=tool.spec.sequential),
        ):
            yield

    def asks(self, name: str, approval: Approval) -> bool:
        # Code Mode's approval mode waives only the tool's own question: an operator's
        # command policy asks whatever the mode.
        if approval.kind == "tool" and self.dispatcher.mode() == "always":
            return False
        _progress(self.cell, name, "approval", **_sid(self.session))
        return True

    @contextlib.contextmanager
    def asking(self, name: str, note: Answering) -> Iterator[None]:
        # While the question is pending the cell lists it (a yielded read says who was asked).
        pending = (name, note)
        self.cell.approvals.append(pending)
        try:
            yield
        finally:
            self.cell.approvals.remove(pending)

    def unavailable(self, name: str) -> str:
        return unavailable_message(name, direct=self.dispatcher.direct(name))

    def denied(self, name: str, note: Answering) -> str:
        return denied_message(name, note)

    def executing(self) -> None:
        self.dispatched = True
        self.cell.counts.unsettled += 1

    def settled(self) -> None:
        self.dispatched = False
        self.cell.counts.unsettled -= 1


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
