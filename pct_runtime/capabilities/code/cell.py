"""One Code Mode cell: its record, its bounded output/result/error, how a read renders it,
and the read-only `CellView` viewers get.

The record is plain state the manager (lifecycle) and the dispatcher (nested calls) both
update; nothing here starts or stops a process. A read turns the record into the model-facing
`ToolResult` (text via `render`, structured `details`) and publishes recovery files as needed.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Protocol, TypeVar

from pct_runtime.capabilities.base import CallContext, ToolResult
from pct_runtime.capabilities.code.bridge import CellChannel, FrameError
from pct_runtime.capabilities.code.render import CallCounts, Observation, render
from pct_runtime.capabilities.code.worker import MAX_DEPTH, nested_deeper_than
from pct_runtime.host.ui import Answering
from pct_runtime.jsontypes import JSONMapping, JSONObject
from pct_runtime.output import Capture, RecoveryRecord, RollingPreview, truncate_text

OUTPUT_BUFFER_BYTES = 256 * 1024
RESULT_BYTES = 32 * 1024
ERROR_BYTES = 4 * 1024
STOP_REASON_BYTES = 1024

_T = TypeVar("_T")


def add_listener(
    listeners: list[Callable[[_T], None]], listener: Callable[[_T], None]
) -> Callable[[], None]:
    """Append `listener`; returns the function that removes it again (idempotent)."""
    listeners.append(listener)

    def remove() -> None:
        if listener in listeners:
            listeners.remove(listener)

    return remove


def notify(listeners: list[Callable[[_T], None]], value: _T) -> None:
    """Call every listener with `value`; a listener that raises is dropped, never fatal."""
    for listener in list(listeners):
        try:
            listener(value)
        except Exception:
            listeners.remove(listener)


@dataclass
class Cell:
    id: str
    channel: CellChannel
    declared: frozenset[str]
    ctx: CallContext
    output: Capture
    result_cap: Capture
    error_cap: Capture
    preview: RollingPreview = field(default_factory=lambda: RollingPreview(OUTPUT_BUFFER_BYTES))
    state: str = "running"
    program_reported: bool = False
    result_parts: list[str] = field(default_factory=list)
    result_bytes: int = 0
    has_result: bool = False
    #: The result parsed by `check_result` (`result_parsed` says whether it was).
    result_value: object = None
    result_parsed: bool = False
    error_parts: list[str] = field(default_factory=list)
    error_bytes: int = 0
    stop_reason: str | None = None
    stop_pending: bool = False
    #: A console stopped it for a person (`console`, `live_console`), not the model.
    stopped_by: str | None = None
    #: Stops waiting for their confirmation right now.
    stop_waiting: int = 0
    fenced: bool = False
    counts: CallCounts = field(default_factory=CallCounts)
    outstanding: int = 0
    outstanding_bytes: int = 0
    dispatches: set[asyncio.Task[None]] = field(default_factory=set)
    terminal: asyncio.Event = field(default_factory=asyncio.Event)
    observe_lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    released: bool = False
    reads: int = 0
    finished_at: float | None = None
    shells: dict[str, str] = field(default_factory=dict)
    progress: Callable[[JSONMapping], None] | None = None
    progress_count: int = 0
    pump: asyncio.Task[None] | None = None
    listeners: list[Callable[[str], None]] = field(default_factory=list)
    #: Adapter names admitted when the cell started (tells "not" from "no longer" admitted).
    admitted_at_start: frozenset[str] = frozenset()
    #: The program's first non-blank line (for viewers).
    title: str = ""
    #: Nested calls whose approval question is pending: (adapter, who was asked).
    approvals: list[tuple[str, Answering]] = field(default_factory=list)
    #: Nested calls waiting for their turn (Patch runs one at a time): (adapter, the cell
    #: whose call runs now, None between two turns).
    queued: list[tuple[str, Callable[[], Cell | None]]] = field(default_factory=list)

    @property
    def pid(self) -> int:
        return self.channel.pid

    def append_output(self, text: str) -> None:
        """One output chunk: recovery capture, rolling preview, then the viewers (a copy)."""
        self.output.append(text)
        self.preview.append(text.encode("utf-8", "replace"))
        notify(self.listeners, text)

    def append_bounded(self, kind: str, text: str) -> None:
        """One result (`rs`) or error (`es`) chunk: all of it to the capture, a bounded
        prefix in memory."""
        cap = self.result_cap if kind == "rs" else self.error_cap
        cap.append(text)
        parts, limit = (
            (self.result_parts, RESULT_BYTES) if kind == "rs" else (self.error_parts, ERROR_BYTES)
        )
        size = len(text.encode("utf-8", "replace"))
        current = self.result_bytes if kind == "rs" else self.error_bytes
        if current <= limit:  # keep one chunk past the limit so clipping is measurable
            parts.append(text)
        if kind == "rs":
            self.has_result = True
            self.result_bytes += size
        else:
            self.error_bytes += size

    def check_result(self) -> None:
        """Parse the result the program reported, once, before the cell counts as finished.

        A worker that reports a result that is not JSON, or nested deeper than `MAX_DEPTH`,
        fails the cell here (`FrameError`, its result dropped) instead of failing every
        read of it. A clipped result is shown as text and not parsed.
        """
        if not self.has_result or self.result_bytes > RESULT_BYTES:
            return
        text = "".join(self.result_parts)
        problem = None
        if nested_deeper_than(text.encode("utf-8", "replace")):
            problem = f"a result nested deeper than {MAX_DEPTH} levels"
        else:
            try:
                self.result_value = json.loads(text)
                self.result_parsed = True
            except (ValueError, RecursionError):
                problem = "a result that is not JSON"
        if problem is not None:
            self.has_result = False
            self.result_parts.clear()
            raise FrameError(
                f"The cell reported {problem}; Code Mode dropped it and failed the cell. "
                "Return flatter, JSON-serializable data."
            )

    def append_stop_reason(self, reason: str) -> None:
        """End the error with why the cell stopped, keeping the reason within the error bound."""
        reason, _ = truncate_text(reason, STOP_REASON_BYTES)
        if self.error_parts:
            head, _ = truncate_text("".join(self.error_parts), ERROR_BYTES - STOP_REASON_BYTES - 2)
            self.error_parts[:] = [head.rstrip("\n") + "\n" + reason]
        else:
            self.error_parts.append(reason)
        self.error_cap.append(("\n" if self.error_bytes else "") + reason)
        self.error_bytes = len("".join(self.error_parts).encode("utf-8"))


async def read_cell(cell: Cell, budget: int) -> tuple[ToolResult, bool]:
    """One observation of `cell` within `budget` output bytes, and whether it was terminal
    (the caller then releases the handle: a terminal result is read exactly once)."""
    terminal = cell.terminal.is_set()
    read = cell.preview.read(budget)
    recovery: JSONObject = {}
    lost = read.lost > 0
    if not terminal:
        recovery["output"] = await cell.output.publish()  # a yield publishes a stable path
    elif lost or cell.output.has_file or cell.output.snapshot().reason is not None:
        if lost:
            await cell.output.publish()  # a terminal read that lost text needs the file
        recovery["output"] = await cell.output.flush()
    result_text, result_clipped = truncate_text("".join(cell.result_parts), RESULT_BYTES)
    error_text, error_clipped = truncate_text("".join(cell.error_parts), ERROR_BYTES)
    if terminal:
        if result_clipped or cell.result_cap.has_file:
            recovery["result"] = await cell.result_cap.flush()
        if error_clipped or cell.error_cap.has_file:
            recovery["error"] = await cell.error_cap.flush()
    # A program that reported before the stop landed keeps its own result and says nothing.
    stopped_by = cell.stopped_by if cell.state in ("running", "terminated") else None
    obs = Observation(
        cell_id=cell.id,
        state=cell.state,
        counts=replace(cell.counts),
        output=read.text,
        output_omitted=read.omitted,
        output_dropped=read.dropped,
        result=result_text if terminal and cell.has_result else None,
        result_clipped=result_clipped if terminal else 0,
        error=error_text if terminal else None,
        error_clipped=error_clipped if terminal else 0,
        stop_pending=cell.stop_pending and not terminal,
        stopped_by=stopped_by,
        shells=dict(cell.shells),
        approvals=[] if terminal else [(n, _asked(a)) for n, a in cell.approvals],
        queued=[] if terminal else [(n, _ahead(cell, ahead())) for n, ahead in cell.queued],
        recovery=recovery,
        first_read=cell.reads == 0,
    )
    cell.reads += 1
    details: JSONObject = {
        "cell_id": cell.id,
        "status": cell.state,
        "output": read.text,
        "truncated": lost,
        "dropped": read.dropped,
        "clipping": {
            "output": read.omitted > 0,
            "result": bool(obs.result_clipped),
            "error": bool(obs.error_clipped),
        },
        "nested_calls": {
            "completed": obs.counts.completed,
            "failed": obs.counts.failed,
            "cancelled": obs.counts.cancelled,
            "unsettled": obs.counts.unsettled,
        },
        "recovery": {k: v.to_dict() for k, v in recovery.items()},
    }
    if obs.result is not None:
        parsed = cell.result_parsed and not result_clipped
        details["result"] = cell.result_value if parsed else {"clipped": result_text}
    if obs.error:
        details["error"] = obs.error
    if cell.shells:
        details["shells"] = [{"session_id": s, "state": v} for s, v in cell.shells.items()]
    if obs.approvals:
        details["awaiting_approval"] = [{"adapter": n, **a.to_details()} for n, a in cell.approvals]
    if obs.queued:
        details["queued"] = [{"adapter": n, "behind": ahead} for n, ahead in obs.queued]
    if obs.stop_pending:
        details["unknown_outcome"] = True
    if stopped_by is not None:
        details["stopped_by"] = stopped_by
    return ToolResult(text=render(obs), details=details), terminal


def _ahead(cell: Cell, ahead: Cell | None) -> str:
    """Whose nested call a queued one waits for, with that call's pending question."""
    if ahead is None:
        return "another nested call"
    who = "another nested call of this cell" if ahead is cell else ahead.id
    if not ahead.approvals:
        return who if ahead is cell else f"{who}'s nested call"
    name, note = ahead.approvals[0]
    return f"{who}, whose nested {name} is waiting for approval ({_asked(note)})"


def _asked(note: Answering) -> str:
    """Who a pending question went to, in the words of the cell's text."""
    if note.route == "console":
        return "asked the pct console"
    if note.route == "elicitation":
        return f"asked the MCP client {note.client}" if note.client else "asked the MCP client"
    return "asked the user"


class _Stopper(Protocol):
    async def stop_cell(self, cell_id: str, *, by: str | None = None) -> bool: ...


class CellView:
    """A read-only view of one cell for viewers: id, state, output and recovery records."""

    def __init__(self, manager: _Stopper, cell: Cell) -> None:
        self._manager = manager
        self._cell = cell

    @property
    def id(self) -> str:
        return self._cell.id

    @property
    def state(self) -> str:
        return self._cell.state

    @property
    def title(self) -> str:
        return self._cell.title

    @property
    def terminal(self) -> asyncio.Event:
        return self._cell.terminal

    @property
    def stopping(self) -> bool:
        """A stop is waiting for its confirmation right now."""
        return self._cell.stop_waiting > 0

    def recovery(self) -> dict[str, RecoveryRecord]:
        cell = self._cell
        return {
            "output": cell.output.snapshot(),
            "result": cell.result_cap.snapshot(),
            "error": cell.error_cap.snapshot(),
        }

    def output_capture(self) -> Capture:
        """The capture of the cell's emitted text (live viewers read it by offset)."""
        return self._cell.output

    def output_text(self) -> str | None:
        """The whole output while it is only in memory (else see the recovery file)."""
        return self._cell.output.memory_text()

    def add_output_listener(self, listener: Callable[[str], None]) -> Callable[[], None]:
        """Call `listener(text)` with every output chunk of the cell (a copy)."""
        return add_listener(self._cell.listeners, listener)

    async def stop(self, *, by: str | None = None) -> bool:
        """Stop it for a person; `by` names the console (the model's next read says so)."""
        return await self._manager.stop_cell(self._cell.id, by=by)
