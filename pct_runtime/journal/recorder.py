"""Turning a live call into a journal row: `CallTrace` (one call) and its nested observer.

The runtime starts a trace where every call passes (`RuntimeSession.call`); Code Mode's
dispatcher starts one per nested call through the cell's `CallObserver`. Starting and
finishing only read the clock and build a record: redaction and SQLite run on the writer
thread. Errors map to outcomes as in `pct apply-patch` (`spool.outcome_of`): a policy or
approval refusal is `denied`, a cancellation `cancelled`, any other `ToolError` `error` with
its code. A Code Mode `exec`/`wait` answers without a `ToolError` even when its cell failed,
so its outcome comes from the cell's state (`cell_outcome`): a History that shows a failed
cell as `ok` misleads the operator.
"""

from __future__ import annotations

import re
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import cast

import pct_runtime.journal.spool as spool  # the module, not the package (no import circle)
from pct_runtime.capabilities.base import CallObservation, CallPath, PatchWitness
from pct_runtime.journal.capture import PatchCapture
from pct_runtime.journal.records import CallRecord, Outcome
from pct_runtime.journal.summary import recovery_paths, summarize
from pct_runtime.journal.writer import JournalWriter
from pct_runtime.jsontypes import JSONMapping

CELL_TOOLS = frozenset({"exec", "wait"})
#: A failed cell whose error names no code (a NameError, an assertion) gets this one.
CELL_FAILED = "cell-failed"
CELL_TERMINATED = "terminated"
# The worker appends this line when a nested call's ToolError ended the cell.
_CELL_ERROR_CODE = re.compile(r"\(ToolError code: ([A-Za-z0-9_.-]{1,64})\)\s*\Z")


@dataclass(frozen=True)
class CallOrigin:
    """Who made a call: the transport and the MCP client's `clientInfo`."""

    transport: str
    client_name: str | None = None
    client_version: str | None = None


def cell_outcome(details: JSONMapping | None) -> tuple[str, str | None]:
    """The outcome of an `exec`/`wait` that answered, from its cell's state: `running` and
    `completed` are `ok`; `failed` is `error` with the code of the nested call's `ToolError`
    that ended it, else `cell-failed`; `terminated` (stopped, aborted, closed) is
    `cancelled`."""
    status = details.get("status") if details is not None else None
    if status == "failed":
        error = details.get("error") if details is not None else None
        found = _CELL_ERROR_CODE.search(error) if isinstance(error, str) else None
        return "error", found.group(1) if found else CELL_FAILED
    if status == "terminated":
        return "cancelled", CELL_TERMINATED
    return "ok", None


class CallTrace:
    """One call being journaled; `finish` submits its record (once)."""

    def __init__(
        self,
        writer: JournalWriter,
        *,
        tool: str,
        args: Mapping[str, object] | None,
        session_id: str | None,
        origin: CallOrigin,
        model: str | None,
        path: CallPath = "direct",
        parent_call_id: str | None = None,
        summary: str | None = None,
    ) -> None:
        self.writer = writer
        self._summary = summary
        self.call_id = spool.new_call_id()
        self.tool = tool
        self._args = args
        self._session_id = session_id
        self._origin = origin
        self._model = model
        self._path: CallPath = path
        self._parent = parent_call_id
        self._time = time.time()
        self._clock = time.monotonic()
        # Every call gets one (cheap until used): only a patch executor calls it.
        self._capture: PatchCapture | None = writer.patch_capture()
        self._done = False

    @property
    def patch_witness(self) -> PatchWitness | None:
        return self._capture

    def nested(self) -> NestedObserver:
        """The observer a cell's nested calls report to (children of this call)."""
        return NestedObserver(self)

    def finish(
        self,
        *,
        outcome: str,
        error_code: str | None = None,
        text: str = "",
        details: JSONMapping | None = None,
    ) -> None:
        if self._done:
            return
        self._done = True
        if outcome == "ok" and self.tool in CELL_TOOLS:
            outcome, error_code = cell_outcome(details)
        try:
            record = CallRecord(
                call_id=self.call_id,
                seq=0,
                time=self._time,
                session_id=self._session_id,
                client_name=self._origin.client_name,
                client_version=self._origin.client_version,
                model=self._model,
                tool=self.tool,
                transport=self._origin.transport,
                path=self._path,
                parent_call_id=self._parent,
                summary=self._summary or "",
                outcome=cast(Outcome, spool.outcome_of(outcome, error_code)),
                error_code=error_code if outcome != "ok" else None,
                duration_ms=(time.monotonic() - self._clock) * 1000,
                result_text=text,
                recovery_paths=recovery_paths(details),
            )
        except Exception:  # the journal never fails a call
            return
        tool, args = self.tool, self._args
        self._args = None
        typed = self.writer.typed_for(self._session_id, args)
        # The summary and the file images are made on the writer thread, off the call's path.
        lazy = None if self._summary is not None else (lambda: summarize(tool, args))
        self.writer.submit(record, self._capture, lazy, typed)


class NestedObserver:
    """`CallObserver` of one call: its nested calls become rows with it as parent."""

    def __init__(self, parent: CallTrace) -> None:
        self._parent = parent

    def start(self, tool: str, args: JSONMapping, *, cell_id: str | None) -> CallObservation:
        parent = self._parent
        return CallTrace(
            parent.writer,
            tool=tool,
            args=args,
            session_id=parent._session_id,
            origin=parent._origin,
            model=parent._model,
            path="nested",
            parent_call_id=parent.call_id,
        )
