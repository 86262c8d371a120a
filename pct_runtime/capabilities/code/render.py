"""The model-facing text of one `exec` / `wait` observation.

Order: running phrase, `cell_id <id>: <state>`, who stopped it (a console), stop uncertainty,
nested-call counts, pending approvals, queued nested calls, shell continuations, recovery
lines, then `[output]`,
`[result]` (compact JSON), `[error]`. Status, uncertainty, approvals, shell control and recovery
lines come first and are never cut; the payload is bounded so the whole text stays within
331,776 UTF-8 bytes.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from pct_runtime.capabilities.stops import stopper_line
from pct_runtime.output import RecoveryRecord, truncate_text

RENDER_LIMIT_BYTES = 331_776
STOP_REQUEST = "Cell terminated by request."
STOP_ABORTED = "Cell terminated because the calling tool call was aborted."
STOP_CLOSED = "Cell terminated because Code Mode was disabled or the session ended."
#: What `exec` and every nested call get once the manager is closed (disable, session end).
CLOSED_MESSAGE = "Code Mode is not available in this session."


def unknown_cell_message(cell_id: str) -> str:
    return (
        f"Code Mode cell {cell_id} is unknown, released or expired. Use previously returned "
        "recovery paths; never rerun a program to recover output."
    )


@dataclass
class CallCounts:
    completed: int = 0
    failed: int = 0
    cancelled: int = 0
    unsettled: int = 0

    @property
    def total(self) -> int:
        return self.completed + self.failed + self.cancelled + self.unsettled

    def line(self) -> str:
        return (
            f"nested calls: {self.completed} completed, {self.failed} failed, "
            f"{self.cancelled} cancelled before dispatch, {self.unsettled} unsettled"
        )


@dataclass
class Observation:
    """Everything one read shows; built by the manager, rendered here."""

    cell_id: str
    state: str
    counts: CallCounts
    output: str = ""
    output_omitted: int = 0
    output_dropped: int = 0
    result: str | None = None
    result_clipped: int = 0
    error: str | None = None
    error_clipped: int = 0
    stop_pending: bool = False
    stopped_by: str | None = None
    shells: dict[str, str] = field(default_factory=dict)
    #: Pending approval questions of a running cell: (adapter, "asked the ...").
    approvals: list[tuple[str, str]] = field(default_factory=list)
    #: Nested calls waiting for their turn: (adapter, whose call runs ahead of it).
    queued: list[tuple[str, str]] = field(default_factory=list)
    recovery: dict[str, RecoveryRecord] = field(default_factory=dict)
    first_read: bool = True


def _waiting_lines(obs: Observation) -> list[str]:
    """What a running cell's nested calls wait for: an answer, their turn, a shell."""
    lines: list[str] = []
    for adapter, asked in obs.approvals:
        lines.append(
            f"nested {adapter} is waiting for approval ({asked}); nothing is changed until "
            "it is answered. Call wait with this cell_id again to get the result."
        )
    for adapter, ahead in obs.queued:
        lines.append(
            f"nested {adapter} waits for its turn behind {ahead}; it runs once that is done. "
            "Call wait with this cell_id again to get the result."
        )
    for session_id, state in obs.shells.items():
        lines.append(
            f"shell {session_id}: {state} — it belongs to Shell Sessions; continue it with "
            "write_stdin session_id, not wait."
        )
    return lines


def render(obs: Observation) -> str:
    head: list[str] = []
    if obs.state == "running":
        head.append(f"Script running with cell ID {obs.cell_id}. Continue with wait cell_id.")
    head.append(f"cell_id {obs.cell_id}: {obs.state}")
    if obs.stopped_by is not None:
        head.append(stopper_line(obs.stopped_by, "program", done=obs.state != "running"))
    if obs.stop_pending:
        head.append(
            "stop requested but not yet confirmed: the program may still be running and its "
            "effects are unknown; call wait with terminate=true again."
        )
    if obs.counts.total:
        head.append(obs.counts.line())
    head.extend(_waiting_lines(obs))
    for label, record in obs.recovery.items():
        head.append(record.line(label))
    text = "\n".join(head) + "\n"
    budget = RENDER_LIMIT_BYTES - len(text.encode("utf-8"))
    sections: list[str] = []
    notes: list[str] = []
    if obs.output_omitted or obs.output_dropped:
        lost = obs.output_omitted + obs.output_dropped
        notes.append(
            f"[output truncated: {lost} UTF-8 bytes not shown; read them from the output "
            "recovery path instead of rerunning]"
        )
    if obs.result_clipped:
        notes.append(
            f"[result clipped: {obs.result_clipped} UTF-8 bytes not shown; the result recovery "
            "path holds all of it]"
        )
    if obs.error_clipped:
        notes.append(f"[error clipped: {obs.error_clipped} UTF-8 bytes not shown]")
    note_text = "".join(n + "\n" for n in notes)
    budget -= len(note_text.encode("utf-8")) + 64
    for title, body in (("[output]", obs.output), ("[result]", obs.result), ("[error]", obs.error)):
        if not body:
            continue
        body_text = body if body.endswith("\n") else body + "\n"
        piece = f"{title}\n{body_text}"
        kept, cut = truncate_text(piece, max(budget, 0))
        if cut:
            kept += "…\n"
            notes.append(f"[{title[1:-1]} cut to fit the {RENDER_LIMIT_BYTES}-byte result bound]")
        sections.append(kept)
        budget -= len(kept.encode("utf-8"))
    if not sections:
        sections.append("(no output)\n" if obs.first_read else "(no new output)\n")
    text += "".join(sections) + "".join(n + "\n" for n in notes)
    return text.rstrip("\n")
