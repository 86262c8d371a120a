"""How a journaled call reads in the console: its row cells, its one-line detail, the
confirmation of an undo and its outcome. Plain text functions, shared by the History list
and the call view."""

from __future__ import annotations

import time

from rich.text import Text

from pct_tui.journal_access import CallRecord, PatchFile, UndoOutcome

OUTCOME_STYLES = {
    "ok": "green",
    "error": "bold red",
    "denied": "bold dark_orange",
    "cancelled": "dark_orange",
    "undone": "grey50",
}


def call_time(when: float, now: float | None = None) -> str:
    """`HH:MM:SS` today, `MM-DD HH:MM` on an earlier day (local time)."""
    now = time.time() if now is None else now
    stamp = time.localtime(when)
    if time.strftime("%Y-%m-%d", stamp) == time.strftime("%Y-%m-%d", time.localtime(now)):
        return time.strftime("%H:%M:%S", stamp)
    return time.strftime("%m-%d %H:%M", stamp)


def full_time(when: float) -> str:
    return time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(when))


def duration(ms: float) -> str:
    """`850 ms`, `12.3 s`, `4 m 05 s`: short enough for the table's column."""
    if ms < 1000:
        return f"{ms:.0f} ms"
    if ms < 60_000:
        return f"{ms / 1000:.1f} s"
    minutes, seconds = divmod(round(ms / 1000), 60)
    return f"{minutes} m {seconds:02d} s"


def outcome_cell(record: CallRecord) -> Text:
    """The outcome, or `undone` for a patch a later undo took back."""
    label = "undone" if record.undone_by else record.outcome
    return Text(label, style=OUTCOME_STYLES.get(label, ""))


def tool_cell(record: CallRecord) -> str:
    """A nested call (made by a Code Mode cell) is marked `↳`."""
    return f"↳ {record.tool}" if record.path == "nested" else record.tool


def in_time_order(records: list[CallRecord]) -> list[CallRecord]:
    """Newest first by when each call started (the journal numbers calls as they finish, so
    a long cell would sit above calls it started before), each cell's nested calls right
    under it in the order they started. A nested call whose cell is not listed (filtered
    out, or on a later page) stands at its own time."""
    listed = {r.call_id for r in records}
    children: dict[str, list[CallRecord]] = {}
    top: list[CallRecord] = []
    for record in records:
        parent = record.parent_call_id
        if parent is not None and parent in listed:
            children.setdefault(parent, []).append(record)
        else:
            top.append(record)
    ordered: list[CallRecord] = []
    for record in sorted(top, key=lambda r: (r.time, r.seq), reverse=True):
        ordered.append(record)
        ordered.extend(sorted(children.get(record.call_id, ()), key=lambda r: (r.time, r.seq)))
    return ordered


def first_line(text: str) -> str:
    line = text.strip().splitlines()[0] if text.strip() else ""
    return line


def detail_line(record: CallRecord) -> str:
    """Under the table: who made the highlighted call and what can be done with it."""
    client = " ".join(p for p in (record.client_name, record.client_version) if p) or "—"
    parts = [record.call_id, f"client {client}", f"model {record.model or '—'}"]
    parts.append(record.transport)
    if record.outcome != "ok" and record.error_code:
        parts.append(f"{record.outcome}: {record.error_code}")
    if record.recovery_paths:
        parts.append(f"{len(record.recovery_paths)} recovery file(s)")
    if record.undo_of:
        parts.append(f"undo of {record.undo_of}")
    if record.undone_by:
        parts.append(f"undone by {record.undone_by}")
    hint = "Enter opens it; u undoes its file changes." if record.undoable else "Enter opens it."
    return " · ".join(parts) + "\n" + hint


def not_undoable(record: CallRecord) -> str:
    """Why `u` does nothing on this call (the user reads it as a notification)."""
    if not record.patch_files:
        return f"{record.call_id} ({record.tool}) changed no file: only patch calls can be undone."
    if record.undone_by:
        return f"{record.call_id} was already undone by {record.undone_by}."
    return f"{record.call_id} did not apply ({record.outcome}): there is nothing to undo."


def file_action(change: PatchFile, what: str = "patch") -> str:
    if change.before is None:
        return f"remove   {change.path}  (the {what} created it)"
    if change.after is None:
        return f"recreate {change.path}  (the {what} deleted or moved it)"
    return f"restore  {change.path}"


def undo_question(record: CallRecord) -> tuple[str, str]:
    """(title, message) of the confirmation: every file the undo would touch, by name."""
    what = "undo" if record.undo_of else "patch"
    title = f"Undo {what} {record.call_id}?"
    lines = [
        f"Each file goes back to what it was before this {what}, only if it is still exactly "
        f"what the {what} wrote; if any changed since, nothing changes.",
        "",
        *(file_action(change, what) for change in record.patch_files),
    ]
    return title, "\n".join(lines)


def undo_report(outcome: UndoOutcome) -> str:
    """The outcome as the user reads it; a refusal names every file changed since."""
    message = outcome.message.strip()
    missing = [path for path in outcome.changed_since if path not in message]
    if not outcome.ok and missing:
        message += "\nChanged since the patch: " + ", ".join(missing)
    return message
