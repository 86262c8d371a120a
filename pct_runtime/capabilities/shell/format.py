"""The model-facing text and the details (snake_case) of one Shell Sessions observation.

Text order (toolkit contract): `session_id <id>: <running|completed|terminated>`; a non-running
result adds `exit_code: <code | signal | unknown>`; a running one adds `job still running;
continue with write_stdin, not wait`; then who stopped it when a console did; then unknown-
outcome, stdin and recovery lines (a stream's recovery line when its file first appears or
changes state; details carry every record on every call); then `[stdout]`/`[stderr]` blocks
or `(no new output)`/`(no output)`; then truncation notes.
"""

from __future__ import annotations

import signal as _signal
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal

from pct_runtime.capabilities.base import ToolResult
from pct_runtime.capabilities.stops import stopper_line, typed_line
from pct_runtime.jsontypes import JSONObject
from pct_runtime.output import PREVIEW_LIMIT_BYTES, PreviewRead, RecoveryRecord

ShellStatus = Literal["running", "completed", "terminated"]
RUNNING_HINT = "job still running; continue with write_stdin, not wait"


def signal_name(number: int) -> str:
    try:
        return _signal.Signals(number).name
    except ValueError:
        return f"signal {number}"


@dataclass
class StdinReport:
    """What a call did to stdin. `delivery` is a transport result, not an app receipt;
    `pending` means the call answered at its yield while bytes were still queued."""

    delivery: Literal["written", "unknown", "pending"] | None = None
    requested_bytes: int = 0
    written_bytes: int = 0
    closed: bool = False


@dataclass
class ShellObservation:
    """Everything one result reports; built by the manager, rendered by `format_shell_result`."""

    session_id: str
    status: ShellStatus
    returncode: int | None = None
    stdout: PreviewRead = field(default_factory=lambda: PreviewRead(b"", 0, 0))
    stderr: PreviewRead = field(default_factory=lambda: PreviewRead(b"", 0, 0))
    recovery: Mapping[str, RecoveryRecord] = field(default_factory=dict)
    ever_output: bool = False
    stdin: StdinReport | None = None
    #: Writes of earlier calls that were still pending when those calls answered.
    stdin_earlier: list[StdinReport] = field(default_factory=list)
    stdin_transport: bool = False
    unknown_outcome: bool = False
    #: A console stopped it for a person (`console`, `live_console`), not the model.
    stopped_by: str | None = None
    #: Bytes a person typed into stdin from a console since the last read, and from where.
    operator_typed: int = 0
    typed_by: str | None = None
    preview_limit: int = PREVIEW_LIMIT_BYTES
    #: Streams whose recovery line the text shows; None shows every record. The manager
    #: names a file when it first appears or changes state, not on every poll.
    recovery_shown: frozenset[str] | None = None

    def exit_code_text(self) -> str:
        if self.returncode is None:
            return "unknown"
        if self.returncode < 0:
            return signal_name(-self.returncode)
        return str(self.returncode)


def _truncation_note(
    label: str, read: PreviewRead, record: RecoveryRecord | None, limit: int
) -> str:
    parts = []
    if read.omitted:
        parts.append(f"{read.omitted} over this call's output budget")
    if read.dropped:
        parts.append(f"{read.dropped} dropped by the {limit // 1024} KiB preview before this read")
    where = (
        f"read them from the {label} recovery file ({record.path})"
        if record is not None and record.path is not None
        else "no recovery file is available, so that text is lost"
    )
    return f"[{label}: {read.lost} UTF-8 bytes not shown — {', '.join(parts)}; {where}]"


def _stdin_line(report: StdinReport, prefix: str = "stdin") -> str | None:
    if report.delivery == "unknown":
        return (
            f"{prefix}: delivery unknown ({report.written_bytes} of {report.requested_bytes} "
            "UTF-8 bytes reached the pipe before it failed or the job ended); stdin is now "
            "closed. Do not resend automatically — check the output first."
        )
    if report.delivery == "pending":
        close = ", then closes stdin" if report.closed else ""
        return (
            f"{prefix}: pending ({report.written_bytes} of {report.requested_bytes} UTF-8 bytes "
            "reached the pipe so far; the program has not read the rest yet). pct keeps "
            f"writing it in the background{close}; do not resend — poll with write_stdin to "
            "see it delivered."
        )
    if report.delivery == "written" and report.requested_bytes:
        text = f"{prefix}: written ({report.requested_bytes} UTF-8 bytes)"
        return text + "; closed" if report.closed else text
    if report.closed:
        return f"{prefix}: closed"
    return None


def _status_lines(obs: ShellObservation) -> list[str]:
    """The head: the status, then the exit code (ended) or the running hint, then who
    stopped it when a console did, then an unknown outcome."""
    lines = [f"session_id {obs.session_id}: {obs.status}"]
    if obs.status != "running":
        lines.append(f"exit_code: {obs.exit_code_text()}")
    else:
        lines.append(RUNNING_HINT)
    if obs.stopped_by is not None:
        lines.append(stopper_line(obs.stopped_by, "command", done=obs.status != "running"))
    if obs.unknown_outcome:
        lines.append(
            "outcome unknown: the process group did not confirm exit after SIGTERM and SIGKILL; "
            "the session is kept — poll it or terminate it again with write_stdin"
        )
    return lines


def _input_lines(obs: ShellObservation) -> list[str]:
    """What this and earlier calls did to stdin, what a person typed, a stdin transport."""
    reports = [(obs.stdin, "stdin")] if obs.stdin is not None else []
    reports += [(earlier, "stdin (earlier call)") for earlier in obs.stdin_earlier]
    lines = [line for report, prefix in reports if (line := _stdin_line(report, prefix))]
    if obs.operator_typed:
        lines.append(typed_line(obs.operator_typed, obs.typed_by))
    if obs.stdin_transport:
        lines.append(
            "stdin: carried the command (stdin transport); this session is not interactive"
        )
    return lines


def _recovery_lines(obs: ShellObservation) -> list[str]:
    """The recovery line of each stream the manager chose to show (all when it names none)."""
    lines = []
    for label in ("stdout", "stderr"):
        record = obs.recovery.get(label)
        if record is not None and (obs.recovery_shown is None or label in obs.recovery_shown):
            lines.append(record.line(label))
    return lines


def _output_text(obs: ShellObservation, blocks: list[tuple[str, PreviewRead]]) -> str:
    """The `[stdout]`/`[stderr]` blocks or the no-output line, then the truncation notes."""
    text = ""
    shown = [(label, read.text) for label, read in blocks if read.data]
    for label, body in shown:
        # One trailing newline is absorbed by the line structure; details keep exact text.
        text += f"\n[{label}]\n" + (body[:-1] if body.endswith("\n") else body)
    if not shown:
        text += "\n(no new output)" if obs.ever_output else "\n(no output)"
    notes = [
        _truncation_note(label, read, obs.recovery.get(label), obs.preview_limit)
        for label, read in blocks
        if read.lost
    ]
    if notes:
        text += "\n" + "\n".join(notes)
    return text


def _exit_details(obs: ShellObservation) -> tuple[int | None, str | None]:
    """`(exit_code, signal)` of an ended job: a code, a signal's name, or neither."""
    if obs.status == "running" or obs.returncode is None:
        return None, None
    if obs.returncode < 0:
        return None, signal_name(-obs.returncode)
    return obs.returncode, None


def _details(obs: ShellObservation, blocks: list[tuple[str, PreviewRead]]) -> JSONObject:
    exit_code, signal_text = _exit_details(obs)
    details: JSONObject = {
        "session_id": obs.session_id,
        "status": obs.status,
        "exit_code": exit_code,
        "stdout": obs.stdout.text,
        "stderr": obs.stderr.text,
        "truncated": {
            label: {"dropped_bytes": read.dropped, "omitted_bytes": read.omitted}
            for label, read in blocks
            if read.lost
        },
        "recovery": {label: rec.to_dict() for label, rec in obs.recovery.items()},
        "unknown_outcome": obs.unknown_outcome,
    }
    if signal_text is not None:
        details["signal"] = signal_text
    if obs.stopped_by is not None:
        details["stopped_by"] = obs.stopped_by
    if obs.stdin is not None and obs.stdin.delivery is not None:
        details["input_delivery"] = obs.stdin.delivery
        details["input_bytes"] = obs.stdin.requested_bytes
        if obs.stdin.delivery == "pending":
            details["input_written_bytes"] = obs.stdin.written_bytes
    if obs.stdin_transport:
        details["stdin_transport"] = True
    if obs.operator_typed:
        details["operator_typed_bytes"] = obs.operator_typed
    return details


def format_shell_result(obs: ShellObservation) -> ToolResult:
    """Render one observation as the exact text and details both tools return."""
    lines = _status_lines(obs) + _input_lines(obs) + _recovery_lines(obs)
    blocks = [("stdout", obs.stdout), ("stderr", obs.stderr)]
    text = "\n".join(lines) + _output_text(obs, blocks)
    return ToolResult(text=text, details=_details(obs, blocks))
