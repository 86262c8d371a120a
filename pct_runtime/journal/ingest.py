"""From a spooled row to a record, and the note a failing row leaves in the journal.

A row reaches here only after its authenticator matched (`spool.Spool`), so it was written
by a pct process; its fields are still checked by type, so a row of another pct version
can never insert a value the readers do not expect. A row that fails is quarantined and
reported once, as one journal row (`pct log` and History show it) and on stderr.
"""

from __future__ import annotations

from collections.abc import Sequence

from pct_runtime.journal.records import OUTCOMES, Anchor, CallRecord, FileImage, PatchFile
from pct_runtime.journal.spool import QUARANTINE_DIR_NAME, Spooled, new_call_id

#: The tool name and error code of the note a quarantined row leaves.
CHECK_TOOL = "journal-check"
QUARANTINED = "spool-quarantined"
_NAMES_SHOWN = 5


def _text(value: object) -> str:
    if not isinstance(value, str):
        raise TypeError("not a string")
    return value


def _number(value: object) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise TypeError("not a number")
    return float(value)


def _image(value: object) -> FileImage | None:
    if value is None:
        return None
    if not isinstance(value, list) or len(value) != 2:
        raise TypeError("not an image")
    sha, mode = value
    if isinstance(mode, bool) or not isinstance(mode, int):
        raise TypeError("not a mode")
    return FileImage(_text(sha), mode)


def _patch_file(value: object, anchor: object) -> PatchFile:
    if not isinstance(value, list) or len(value) != 3:
        raise TypeError("not a patch file")
    path, before, after = value
    # A row without an anchor (an older pct) stays in the log, but undo refuses it.
    where = Anchor.of(*anchor) if isinstance(anchor, list) and len(anchor) == 2 else None
    return PatchFile(_text(path), _image(before), _image(after), where)


def row_record(row: dict[str, object]) -> CallRecord | None:
    """A verified spooled row as a record; None when a field has the wrong type."""
    try:
        files = row["patch_files"]
        if not isinstance(files, list):
            return None
        anchors = row.get("anchors")  # absent in rows of an older pct
        if not isinstance(anchors, list) or len(anchors) != len(files):
            anchors = [None] * len(files)
        outcome = row["outcome"]
        error_code = row.get("error_code")
        for found in OUTCOMES:
            if outcome == found:
                break
        else:
            return None
        return CallRecord(
            call_id=_text(row["call_id"]),
            seq=0,
            time=_number(row["time"]),
            session_id=None,
            client_name=None,
            client_version=None,
            model=None,
            tool=_text(row["tool"]),
            transport=_text(row["transport"]),
            path="direct",
            parent_call_id=None,
            summary=_text(row["summary"]),
            outcome=found,
            error_code=None if error_code is None else _text(error_code),
            duration_ms=_number(row["duration_ms"]),
            result_text=_text(row["result_text"]),
            patch_files=tuple(
                _patch_file(item, anchor) for item, anchor in zip(files, anchors, strict=True)
            ),
        )
    except (KeyError, TypeError, ValueError):
        return None


def _shown(name: str) -> str:
    """A file name as a line may show it: printable ASCII, bounded (a job chose it)."""
    return ascii(name)[1:-1][:80]


def quarantine_message(failed: Sequence[Spooled]) -> str:
    """One line naming the quarantined files and why each failed."""
    listed = ", ".join(f"{_shown(s.name)} ({s.problem})" for s in failed[:_NAMES_SHOWN])
    more = f" and {len(failed) - _NAMES_SHOWN} more" if len(failed) > _NAMES_SHOWN else ""
    rows = "row" if len(failed) == 1 else "rows"
    verb = "failed its check and was" if len(failed) == 1 else "failed their check and were"
    return f"{len(failed)} spooled journal {rows} {verb} quarantined: {listed}{more}"


def quarantine_record(failed: Sequence[Spooled], now: float, spool_path: str) -> CallRecord:
    """The journal row that reports quarantined spool files (once: they are moved away)."""
    return CallRecord(
        call_id=new_call_id(),
        seq=0,
        time=now,
        session_id=None,
        client_name=None,
        client_version=None,
        model=None,
        tool=CHECK_TOOL,
        transport="cli",
        path="direct",
        parent_call_id=None,
        summary=quarantine_message(failed),
        outcome="error",
        error_code=QUARANTINED,
        duration_ms=0.0,
        result_text=(
            f"Moved to {spool_path}/{QUARANTINE_DIR_NAME}/; nothing in them was inserted "
            "or applied. A row pct wrote carries a valid authenticator: these did not, so "
            "something else wrote them."
        ),
    )
