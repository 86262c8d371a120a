"""The record: a journal of every tool call, and undo for patches (issue 19).

`<agent dir>/pct/journal.sqlite3` (WAL, 0600) holds one row per call of every pct process
of that agent dir; `<agent dir>/pct/journal-blobs/` the content-addressed file images that
make a patch undoable. The runtime records through one `JournalWriter` per process (off the
event loop); `pct log`, `pct undo` and the console read through `Journal`. Everything here
is synchronous: async callers use `asyncio.to_thread`.

Layer: below `runtime`, above the capabilities (undo stages files the way the patch tool does);
it never imports runtime, serve or pct_tui.
"""

from pct_runtime.journal.capture import PatchCapture
from pct_runtime.journal.records import (
    OUTCOMES,
    CallRecord,
    FileImage,
    JournalQuery,
    Outcome,
    PatchFile,
    UndoOutcome,
)
from pct_runtime.journal.redact import Redactor
from pct_runtime.journal.settings import JournalSettings, settings_for
from pct_runtime.journal.store import Journal, JournalError, db_path, new_call_id
from pct_runtime.journal.undo import patch_diff, undo_patch
from pct_runtime.journal.writer import JournalWriter

__all__ = [
    "OUTCOMES",
    "CallRecord",
    "FileImage",
    "Journal",
    "JournalError",
    "JournalQuery",
    "JournalSettings",
    "JournalWriter",
    "Outcome",
    "PatchCapture",
    "PatchFile",
    "Redactor",
    "UndoOutcome",
    "db_path",
    "new_call_id",
    "patch_diff",
    "settings_for",
    "undo_patch",
]
