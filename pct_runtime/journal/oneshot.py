"""The journal of a one-call process (`pct apply-patch`): its row spooled, nothing hashed.

The patch's images are taken at commit time exactly as in a runtime (a hard link made
durable before the first rename), but the row goes to the spool (`spool.py`) instead of
SQLite, and each image stays a `pending:` marker until whoever opens the journal next
names it by its hash. Problems (a full disk) are printed once on stderr; the command goes
on. Imports no SQLite and no record types, and hashes no file (only the row's authenticator,
`hmac`) — except every `DRAIN_AT`th row, when it inserts the spool and applies retention
itself.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Mapping

import pct_runtime.journal.spool as spool  # the module, not the package (no import circle)
from pct_runtime.host.system.folders import path_text
from pct_runtime.journal.blobs import BLOB_DIR_NAME, BlobStore
from pct_runtime.journal.capture import PatchCapture
from pct_runtime.journal.redact import Redactor
from pct_runtime.journal.settings import JournalSettings, settings_for
from pct_runtime.journal.summary import RESULT_LIMIT, SUMMARY_LIMIT, summarize

TYPE_CHECKING = False  # `typing` stays unloaded on `pct apply-patch` (see pct_runtime.tuples)
if TYPE_CHECKING:  # only an annotation: the tool contract is not loaded by `pct apply-patch`
    from pct_runtime.capabilities.base import PatchWitness

#: When this many rows wait in the spool, the process that adds one inserts them all, names
#: their images and applies retention itself (rarely: a machine where only `pct apply-patch`
#: runs would otherwise never do it).
DRAIN_AT = 50


def _report(message: str) -> None:
    sys.stderr.write(f"pct journal: {message}\n")


class OneShotTrace:
    """One call of a process that exits right after it; `finish` spools its row."""

    def __init__(
        self,
        agent_dir: str | os.PathLike[str],
        tool: str,
        args: Mapping[str, object],
        transport: str,
        settings: JournalSettings | None = None,
    ) -> None:
        self._settings = settings or JournalSettings()
        # Plain strings: pathlib (with urllib.parse) is not loaded by `pct apply-patch`.
        self._agent_dir = path_text(agent_dir)
        self._state = path_text(self._agent_dir, "pct")
        self._tool = tool
        self._args: Mapping[str, object] | None = args
        self._transport = transport
        self._time = time.time()
        self._clock = time.monotonic()
        self._capture = PatchCapture(BlobStore(os.path.join(self._state, BLOB_DIR_NAME)), _report)
        self._done = False

    @classmethod
    def start(
        cls,
        agent_dir: str | os.PathLike[str],
        tool: str,
        args: Mapping[str, object],
        transport: str = "cli",
        settings: JournalSettings | None = None,
    ) -> OneShotTrace | None:
        """None when the journal is off; never raises."""
        try:
            settings = settings or settings_for(agent_dir)
            if not settings.enabled:
                return None
            return cls(agent_dir, tool, args, transport, settings)
        except Exception:
            return None

    @property
    def patch_witness(self) -> PatchWitness:
        return self._capture

    def finish(self, *, outcome: str, error_code: str | None = None, text: str = "") -> None:
        """Spool the call's row (redacted, bounded) before returning; never raises."""
        if self._done:
            return
        self._done = True
        try:
            self._spool(outcome, error_code, text)
        except Exception as exc:  # the journal never fails the command
            self._capture.discard()
            _report(f"writing the journal failed ({exc}); the call was not recorded")

    def _spool(self, outcome: str, error_code: str | None, text: str) -> None:
        duration_ms = (time.monotonic() - self._clock) * 1000
        args, self._args = self._args, None
        try:
            summary = summarize(self._tool, args)
        except Exception:  # a summary must never lose the row
            summary = "(summary unavailable)"
        redact = Redactor(self._agent_dir)
        if any(redact(path) != path for path in self._capture.paths):
            self._capture.discard()  # a file name held a secret: recorded, not undoable
        images = self._capture.pending_images()
        row: dict[str, object] = {
            "call_id": spool.new_call_id(),
            "time": self._time,
            "tool": self._tool,
            "transport": self._transport,
            "summary": redact(summary, SUMMARY_LIMIT),
            "outcome": spool.outcome_of(outcome, error_code),
            "error_code": error_code if outcome != "ok" else None,
            "duration_ms": duration_ms,
            "result_text": redact(text, RESULT_LIMIT),
            "patch_files": [[path, before, after] for path, before, after in images],
            # Each file's working directory and folder identities, which undo checks.
            "anchors": [self._capture.anchor_of(path) for path, _before, _after in images],
        }
        spool.write(self._state, row)
        if spool.count(self._state) >= DRAIN_AT:
            self._drain()

    def _drain(self) -> None:
        from pathlib import Path

        from pct_runtime.journal.store import Journal

        try:
            with Journal.open(Path(self._agent_dir)) as journal:
                journal.ingest_spool()
                journal.prune(self._settings.max_bytes, self._settings.max_age_days)
        except Exception as exc:  # recorded already: the next opener inserts it
            _report(f"the journal's spool could not be inserted now ({exc}); it waits")
