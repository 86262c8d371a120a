"""The record: a journal of every tool call, and undo for patches.

`<agent dir>/pct/journal.sqlite3` (WAL, 0600) holds one row per call of every pct process
of that agent dir; `<agent dir>/pct/journal-blobs/` the content-addressed file images that
make a patch undoable. The runtime records through one `JournalWriter` per process (off the
event loop); `pct log`, `pct undo` and the console read through `Journal`. Everything here
is synchronous: async callers use `asyncio.to_thread`.

Names load on first use (PEP 562): `pct apply-patch` imports `journal.settings` and the
writer only, never difflib or the undo machinery.

Layer: below `runtime`, above the capabilities (undo stages files the way the patch tool does);
it never imports runtime, serve or pct_tui.
"""

from __future__ import annotations

from pct_runtime import lazy

TYPE_CHECKING = False  # `typing` stays unloaded on `pct apply-patch` (see pct_runtime.tuples)
if TYPE_CHECKING:
    from pct_runtime.journal.capture import PatchCapture
    from pct_runtime.journal.records import (
        OUTCOMES,
        Anchor,
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

_WHERE = {
    "PatchCapture": "capture",
    "OUTCOMES": "records",
    "Anchor": "records",
    "CallRecord": "records",
    "FileImage": "records",
    "JournalQuery": "records",
    "Outcome": "records",
    "PatchFile": "records",
    "UndoOutcome": "records",
    "Redactor": "redact",
    "JournalSettings": "settings",
    "settings_for": "settings",
    "Journal": "store",
    "JournalError": "store",
    "db_path": "store",
    "new_call_id": "store",
    "patch_diff": "undo",
    "undo_patch": "undo",
    "JournalWriter": "writer",
}

__all__ = [
    "OUTCOMES",
    "Anchor",
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


__getattr__ = lazy.exports(
    __name__, {name: f"{__name__}.{module}" for name, module in _WHERE.items()}
)
