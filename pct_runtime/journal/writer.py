"""The journal's one writer per process: a thread behind a bounded queue.

A tool call only builds its record and hands it over (`submit` never blocks, never
raises): redaction, SQLite and retention run on the writer thread. When the queue is
full the record is dropped; a full queue, a locked database, a full disk or an
unopenable journal is reported once per kind (`report`) and the calls go on.

Group commit: an idle writer writes a record at once; records that arrive while a write is
in progress share the next transaction. An agent kills its stdio server a few
milliseconds after SIGTERM, so no record may wait for company. `drain` writes the queue on
the caller's thread (the server's first step at exit): the writer thread runs at low
priority and may not get the CPU before the SIGKILL. A record is only taken from the
queue under the write lock, so a drain never misses one the thread holds.
"""

from __future__ import annotations

import contextlib
import logging
import os
import sqlite3
import threading
import time
from collections import OrderedDict, deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path

from pct_runtime.journal.blobs import BLOB_DIR_NAME, BlobStore
from pct_runtime.journal.capture import PatchCapture
from pct_runtime.journal.records import CallRecord
from pct_runtime.journal.redact import Redactor, typed_pieces
from pct_runtime.journal.schema import is_busy
from pct_runtime.journal.settings import JournalSettings
from pct_runtime.journal.store import Journal, JournalError
from pct_runtime.journal.summary import RESULT_LIMIT, SUMMARY_LIMIT

_log = logging.getLogger(__name__)

QUEUE_SIZE = 2048
PRUNE_EVERY_SECONDS = 3600.0
_WRITE_ATTEMPTS = 3
_REOPEN_AFTER_SECONDS = 30.0
_PRUNE_RETRY_SECONDS = 60.0
BATCH_SIZE = 256
#: Typed lines remembered per shell session, and shell sessions remembered.
TYPED_KEPT = 32
TYPED_SHELLS = 256
WRITER_NICE = 10

Report = Callable[[str], None]
_STOP = object()


@dataclass(frozen=True)
class _Pending:
    """A record as the call left it: its summary and file images are made here."""

    record: CallRecord
    capture: PatchCapture | None
    summary: Callable[[], str] | None
    #: Input typed into the call's shell session, redacted from its output.
    typed: tuple[str, ...] = ()

    def resolve(self) -> CallRecord:
        record = self.record
        if self.summary is not None:
            try:
                record = replace(record, summary=self.summary())
            except Exception:  # a summary must never lose the row
                record = replace(record, summary="(summary unavailable)")
        if self.capture is not None:
            record = replace(record, patch_files=self.capture.files())
        return record


class JournalWriter:
    """Records calls of one process into `<agent dir>/pct/journal.sqlite3`."""

    def __init__(
        self,
        agent_dir: Path,
        settings: JournalSettings | None = None,
        *,
        report: Report | None = None,
        redactor: Redactor | None = None,
        queue_size: int = QUEUE_SIZE,
    ) -> None:
        self.agent_dir = Path(agent_dir)
        self.settings = settings or JournalSettings()
        self.redactor = redactor or Redactor(self.agent_dir)
        self.blobs = BlobStore(self.agent_dir / "pct" / BLOB_DIR_NAME)
        self._report = report
        self._reported: set[str] = set()
        self._queue: deque[object] = deque()
        self._queue_size = queue_size
        self._ready = threading.Condition(threading.Lock())
        #: Held while records are taken from the queue and written (thread or `drain`).
        self._io = threading.Lock()
        self._thread: threading.Thread | None = None
        self._journal: Journal | None = None
        self._open_failed_at: float | None = None
        self._last_prune = 0.0
        self._lock = threading.Lock()
        self._open_lock = threading.Lock()
        self._typed: OrderedDict[tuple[str | None, str], tuple[str, ...]] = OrderedDict()
        self.dropped = 0
        self.written = 0
        self._closed = False

    @property
    def enabled(self) -> bool:
        return self.settings.enabled

    # ----------------------------------------------------------------- call side
    def submit(
        self,
        record: CallRecord,
        capture: PatchCapture | None = None,
        summary: Callable[[], str] | None = None,
        typed: tuple[str, ...] = (),
    ) -> None:
        """Queue one record, with the patch capture whose `files()` fill its patch files,
        the function that makes its summary (both run on the writer thread) and the input
        typed into its shell session (`typed_for`); never blocks or raises (a full queue
        drops it, reported once)."""
        if not self.settings.enabled or self._closed:
            if capture is not None:
                capture.discard()
            return
        self._ensure_thread()
        if not self._put(_Pending(record, capture, summary, typed)):
            self.dropped += 1
            if capture is not None:
                capture.discard()
            self._problem("queue", "the journal fell behind; some calls were not recorded")

    def _put(self, item: object, *, force: bool = False) -> bool:
        with self._ready:
            if not force and len(self._queue) >= self._queue_size:
                return False
            self._queue.append(item)
            self._ready.notify()
        return True

    def typed_for(
        self, session_id: str | None, args: Mapping[str, object] | None
    ) -> tuple[str, ...]:
        """What calls typed into the shell session `args` names (its own `chars` added): a
        program may echo it back in this call's output or a later one. Bounded per shell
        and in shells remembered."""
        shell = args.get("session_id") if args else None
        if args is None or shell is None:
            return ()
        key = (session_id, str(shell))
        chars = args.get("chars")
        with self._lock:
            known = self._typed.get(key, ())
            new = typed_pieces(chars) if isinstance(chars, str) else ()
            if new:
                known = (*(p for p in known if p not in new), *new)[-TYPED_KEPT:]
                self._typed[key] = known
            if key in self._typed:
                self._typed.move_to_end(key)
            while len(self._typed) > TYPED_SHELLS:
                self._typed.popitem(last=False)
        return known

    def patch_capture(self) -> PatchCapture | None:
        """A capture for one patch call (None when the journal is off)."""
        if not self.settings.enabled:
            return None
        return PatchCapture(self.blobs, lambda msg: self._problem("capture", msg))

    def flush(self, timeout: float = 5.0) -> bool:
        """Wait until everything queued so far is written (tests, shutdown)."""
        if self._thread is None:
            return True
        done = threading.Event()
        self._put(done, force=True)
        return done.wait(timeout)

    def drain(self, timeout: float = 2.0) -> bool:
        """Write every queued record now, on this thread (a server's first step at exit).

        Waits up to `timeout` for a write in progress; False when it could not get the
        write lock. Control items met on the way are handed back to the thread.
        """
        if self._thread is None:
            return True
        if not self._io.acquire(timeout=timeout):
            return False
        try:
            batch, controls = self._take(len(self._queue) + 1)
            while batch:
                self._write_batch(batch)
                more, later = self._take(BATCH_SIZE)
                batch = more
                controls.extend(later)
        finally:
            self._io.release()
        for item in controls:
            self._put(item, force=True)
        return True

    def _take(self, limit: int) -> tuple[list[_Pending], list[object]]:
        """Up to `limit` records off the queue, and the control items met among them."""
        batch: list[_Pending] = []
        controls: list[object] = []
        with self._ready:
            while self._queue and len(batch) < limit:
                item = self._queue.popleft()
                if isinstance(item, _Pending):
                    batch.append(item)
                else:
                    controls.append(item)
        return batch, controls

    def close(self, timeout: float = 5.0) -> None:
        """Write what is queued (up to `timeout`), then stop the thread and close the file."""
        self._closed = True  # a call finishing later is not recorded (nor a thread restarted)
        thread = self._thread
        if thread is not None:
            self._put(_STOP, force=True)
            thread.join(timeout)
        self._thread = None
        if self._journal is not None:
            self._journal.close()
            self._journal = None

    def prune_soon(self) -> None:
        """Ask the writer thread to apply retention now (it also does at start and hourly)."""
        self._last_prune = 0.0
        if self.settings.enabled and not self._closed:  # a None item wakes the thread
            self._ensure_thread()
            self._put(None, force=True)

    # ----------------------------------------------------------------- thread side
    def _ensure_thread(self) -> None:
        if self._thread is not None:
            return
        with self._lock:
            if self._thread is None:
                thread = threading.Thread(target=self._run, name="pct-journal", daemon=True)
                self._thread = thread
                thread.start()

    def _run(self) -> None:
        with contextlib.suppress(AttributeError, OSError):  # Linux: threads are tasks
            # Hashing and copying a large file's images yields the CPU to the tool calls.
            os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), WRITER_NICE)
        while True:
            with self._ready:
                if not self._queue:
                    self._ready.wait(PRUNE_EVERY_SECONDS / 4)
            item = self._next()
            if item is _STOP:
                return
            if isinstance(item, threading.Event):
                item.set()
                continue
            journal = self._open()
            if journal is not None and (
                time.monotonic() - self._last_prune >= PRUNE_EVERY_SECONDS or not self._last_prune
            ):
                self._prune(journal)

    def _next(self) -> object:
        """Write the records at the head of the queue (all that are there: the group
        commit); return the control item that ended them, None when none did."""
        with self._io:
            with self._ready:
                batch: list[_Pending] = []
                control: object = None
                while self._queue and len(batch) < BATCH_SIZE:
                    item = self._queue[0]
                    if not isinstance(item, _Pending):
                        if not batch:
                            control = self._queue.popleft()
                        break
                    self._queue.popleft()
                    batch.append(item)
            if batch:
                self._write_batch(batch)
        return control

    def _write_batch(self, batch: list[_Pending]) -> None:
        journal = self._open()
        if journal is None:
            for item in batch:
                if item.capture is not None:
                    item.capture.discard()
            self.dropped += len(batch)
            return
        journal.ingest_quietly()  # `pct apply-patch` rows first: they happened before
        for notice in journal.take_notices():  # each quarantined row is said once
            self._problem(f"spool:{notice}", notice)
        self._write(journal, [self.redact(item.resolve(), item.typed) for item in batch])

    def _open(self) -> Journal | None:
        if self._journal is not None:
            return self._journal
        with self._open_lock:  # the thread and a `drain` may both get here first
            return self._open_once()

    def _open_once(self) -> Journal | None:
        if self._journal is not None:
            return self._journal
        now = time.monotonic()
        if self._open_failed_at is not None and now - self._open_failed_at < _REOPEN_AFTER_SECONDS:
            return None
        try:
            self._journal = Journal.open(self.agent_dir)
        except JournalError as exc:
            self._open_failed_at = now
            self._problem("open", f"the journal cannot be opened ({exc}); calls go unrecorded")
            return None
        self._open_failed_at = None
        return self._journal

    def redact(self, record: CallRecord, typed: tuple[str, ...] = ()) -> CallRecord:
        """The record as stored: summary, result and paths redacted and cut (`typed` out of
        the summary and result too); a patch whose file names held a secret keeps none of
        them, so it is recorded but not undoable."""
        redact = self.redactor
        files = record.patch_files
        if any(redact(f.path) != f.path for f in files):
            files = ()
        return replace(
            record,
            summary=redact(record.summary, SUMMARY_LIMIT, typed),
            result_text=redact(record.result_text, RESULT_LIMIT, typed),
            patch_files=files,
            recovery_paths=tuple(redact(p, 1024) for p in record.recovery_paths),
            client_name=redact(record.client_name, 200) if record.client_name else None,
            client_version=redact(record.client_version, 100) if record.client_version else None,
        )

    def _write(self, journal: Journal, records: list[CallRecord]) -> None:
        for attempt in range(_WRITE_ATTEMPTS):
            try:
                journal.record_many(records)
                self.written += len(records)
                return
            except sqlite3.IntegrityError:
                if len(records) > 1:  # one duplicate call id: the others still count
                    for record in records:
                        self._write(journal, [record])
                return  # the same call id twice: the first one stands
            except sqlite3.OperationalError as exc:
                if is_busy(exc):
                    if attempt + 1 < _WRITE_ATTEMPTS:
                        time.sleep(0.05 * (attempt + 1))
                        continue
                    self._problem("locked", f"the journal is locked ({exc}); a call was lost")
                else:
                    self._problem("write", f"writing the journal failed ({exc}); calls go on")
            except (sqlite3.Error, JournalError) as exc:
                self._problem("write", f"writing the journal failed ({exc}); calls go on")
            self.dropped += len(records)
            return

    def _prune(self, journal: Journal) -> None:
        self._last_prune = time.monotonic()
        try:
            journal.prune(self.settings.max_bytes, self.settings.max_age_days)
        except sqlite3.OperationalError as exc:
            if is_busy(exc):  # another process: retry soon
                self._last_prune -= PRUNE_EVERY_SECONDS - _PRUNE_RETRY_SECONDS
                return
            self._problem("prune", f"pruning the journal failed ({exc}); retried in an hour")
        except (sqlite3.Error, JournalError, OSError) as exc:
            self._problem("prune", f"pruning the journal failed ({exc}); retried in an hour")

    def _problem(self, kind: str, message: str) -> None:
        if kind in self._reported:
            return
        self._reported.add(kind)
        _log.warning("pct journal: %s", message)
        if self._report is not None:
            try:
                self._report(message)
            except Exception:  # a reporter must never break a call or the writer
                _log.exception("journal problem reporter failed")
