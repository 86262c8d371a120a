"""The journal database: `<agent dir>/pct/journal.sqlite3`, shared by every pct process.

WAL mode (readers never wait for a writer; a row survives the death of the process that
committed it), a short busy timeout (several runtimes write one file; a writer that still
cannot get the lock gives up — the caller reports it, a tool call never waits on it), file
mode 0600 inside a 0700 folder, schema versioned by `PRAGMA user_version` (`schema.py`).
Rows `pct apply-patch` spooled are inserted by whoever opens or reads the journal next
(`ingest_spool`), and their unhashed images named on demand (`resolve_pending`).

Synchronous (sqlite3 blocks): async code calls it from a thread — the runtime only
through `JournalWriter`.
"""

from __future__ import annotations

import contextlib
import json
import os
import sqlite3
import threading
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, cast

import pct_runtime.journal.spool as spool  # the module, not the package (no import circle)
from pct_runtime.journal.blobs import BLOB_DIR_NAME, PENDING_PREFIX, BlobStore
from pct_runtime.journal.ingest import quarantine_message, quarantine_record, row_record
from pct_runtime.journal.records import (
    Anchor,
    CallRecord,
    FileImage,
    JournalQuery,
    Outcome,
    PatchFile,
)
from pct_runtime.journal.schema import (
    BUSY_TIMEOUT_MS,
    SCHEMA_VERSION,
    JournalError,
    check_file,
    damaged,
    is_busy,
    is_damaged,
    make_private,
    prepare,
)
from pct_runtime.journal.spool import new_call_id

if TYPE_CHECKING:
    from pct_runtime.capabilities.base import CallPath

__all__ = [
    "BUSY_TIMEOUT_MS",
    "SCHEMA_VERSION",
    "Journal",
    "JournalError",
    "db_path",
    "new_call_id",
    "state_dir",
]

DB_NAME = "journal.sqlite3"
_OPEN_ATTEMPTS = 8
_PATIENT_ATTEMPTS = 5
_ROW_OVERHEAD = 256  # bytes per row beyond its texts (indexes, numbers), for retention

_COLUMNS = (
    "seq, call_id, time, session_id, client_name, client_version, model, tool, transport, "
    "path, parent_call_id, summary, outcome, error_code, duration_ms, result_text, "
    "recovery_paths, undo_of, undone_by"
)


def state_dir(agent_dir: Path) -> Path:
    """`<agent dir>/pct`, created 0700 when missing (the token file lives there too)."""
    path = agent_dir / "pct"
    path.mkdir(mode=0o700, parents=True, exist_ok=True)
    return path


def db_path(agent_dir: Path) -> Path:
    return agent_dir / "pct" / DB_NAME


def journal_exists(agent_dir: Path) -> bool:
    """Whether anything was recorded: the database, or a row `pct apply-patch` spooled."""
    if db_path(agent_dir).exists():
        return True
    return spool.count(agent_dir / "pct") > 0


def _image(sha: object, mode: object) -> FileImage | None:
    return FileImage(str(sha), int(cast(int, mode))) if sha is not None else None


class Journal:
    """One connection to the journal; thread-safe (one lock around the connection)."""

    def __init__(self, connection: sqlite3.Connection, path: Path, blobs: BlobStore) -> None:
        self._db = connection
        self.path = path
        self.blobs = blobs
        self._lock = threading.Lock()
        self.closed = False
        #: Spool problems (quarantined rows, an untrusted key) for the CLI to print.
        self.notices: list[str] = []

    # ----------------------------------------------------------------- open / close
    @classmethod
    def open(cls, agent_dir: Path) -> Journal:
        """Open (creating when missing) the journal of `agent_dir`. Raises `JournalError`."""
        try:
            folder = state_dir(Path(agent_dir))
            path = folder / DB_NAME
            check_file(path)
            with contextlib.suppress(FileExistsError):
                os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
            make_private(path)
            connection = sqlite3.connect(
                path, timeout=BUSY_TIMEOUT_MS / 1000, isolation_level=None, check_same_thread=False
            )
        except (OSError, sqlite3.Error) as exc:
            raise JournalError(f"cannot open the journal: {exc}") from None
        for attempt in range(_OPEN_ATTEMPTS):  # another process may be creating it now
            try:
                prepare(connection)
                break
            except sqlite3.OperationalError as exc:
                if attempt + 1 < _OPEN_ATTEMPTS and is_busy(exc):
                    time.sleep(0.05 * (attempt + 1))
                    continue
                connection.close()
                raise JournalError(f"cannot open the journal {path}: {exc}") from None
            except sqlite3.DatabaseError as exc:
                connection.close()
                if is_damaged(exc):
                    raise damaged(path, exc) from None
                raise JournalError(f"cannot open the journal {path}: {exc}") from None
            except sqlite3.Error as exc:
                connection.close()
                raise JournalError(f"cannot open the journal {path}: {exc}") from None
            except JournalError:
                connection.close()
                raise
        journal = cls(connection, path, BlobStore(folder / BLOB_DIR_NAME))
        journal.ingest_quietly()
        return journal

    def close(self) -> None:
        with self._lock:
            if not self.closed:
                self.closed = True
                self._db.close()

    def __enter__(self) -> Journal:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @contextlib.contextmanager
    def _write(self) -> Iterator[sqlite3.Connection]:
        """One IMMEDIATE transaction (takes the write lock up front, or fails fast)."""
        with self._lock:
            if self.closed:
                raise JournalError("the journal is closed")
            self._db.execute("BEGIN IMMEDIATE")
            try:
                yield self._db
            except BaseException:
                self._db.execute("ROLLBACK")
                raise
            self._db.execute("COMMIT")

    @contextlib.contextmanager
    def _write_patiently(self) -> Iterator[sqlite3.Connection]:
        """`_write` that waits out a runtime's writer holding the lock (up to ~1.5 s): an
        ingest or an image name that `pct undo` needs must not fail on a busy moment."""
        with self._lock:
            if self.closed:
                raise JournalError("the journal is closed")
            for attempt in range(_PATIENT_ATTEMPTS):
                try:
                    self._db.execute("BEGIN IMMEDIATE")
                    break
                except sqlite3.OperationalError as exc:
                    if attempt + 1 < _PATIENT_ATTEMPTS and is_busy(exc):
                        time.sleep(0.05 * (attempt + 1))
                        continue
                    raise
            try:
                yield self._db
            except BaseException:
                self._db.execute("ROLLBACK")
                raise
            self._db.execute("COMMIT")

    # ----------------------------------------------------------------- writes
    def record(self, record: CallRecord) -> int:
        """Insert one call (its `seq` is ignored) and mark the call it undoes; return its seq.

        Raises `sqlite3.Error` (locked, full disk) — the writer reports that, once.
        """
        return self.record_many([record])[0]

    def record_many(self, records: Sequence[CallRecord]) -> list[int]:
        """Insert calls in one transaction (all or none); return their seqs."""
        with self._write() as db:
            return [_insert(db, record) for record in records]

    # ----------------------------------------------------------------- reads
    def query(self, query: JournalQuery = JournalQuery()) -> list[CallRecord]:  # noqa: B008
        """Calls matching every given filter, newest first, at most `query.limit`."""
        where: list[str] = []
        params: list[object] = []
        if query.session is not None:
            where.append("session_id = ?")
            params.append(query.session)
        if query.tool is not None:
            where.append("tool = ?")
            params.append(query.tool)
        if query.outcome is not None:
            where.append("outcome = ?")
            params.append(query.outcome)
        if query.since is not None:
            where.append("time >= ?")
            params.append(query.since)
        if query.before_seq is not None:
            where.append("seq < ?")
            params.append(query.before_seq)
        if query.text:
            needle = query.text.lower()
            where.append(
                "(instr(lower(summary), ?) > 0 OR instr(lower(result_text), ?) > 0 "
                "OR instr(lower(tool), ?) > 0 OR instr(lower(coalesce(session_id, '')), ?) > 0 "
                "OR call_id = ?)"
            )
            params += [needle, needle, needle, needle, query.text]
        sql = f"SELECT {_COLUMNS} FROM calls"
        if where:
            sql += " WHERE " + " AND ".join(where)
        sql += " ORDER BY seq DESC LIMIT ?"
        params.append(_limit(query.limit))
        return self._records(sql, params)

    def get(self, call_id: str) -> CallRecord | None:
        rows = self._records(f"SELECT {_COLUMNS} FROM calls WHERE call_id = ?", [call_id])
        return rows[0] if rows else None

    def last_undoable(self, session: str | None = None) -> CallRecord | None:
        """The newest patch of `session` (any session when None) not undone yet.

        Undo calls are skipped, so a second `pct undo` takes back the patch before (an undo
        itself is undone by naming its call id)."""
        sql = (
            f"SELECT {_COLUMNS} FROM calls WHERE outcome = 'ok' AND undone_by IS NULL "
            "AND undo_of IS NULL "
            "AND EXISTS (SELECT 1 FROM patch_files p WHERE p.call_id = calls.call_id)"
        )
        params: list[object] = []
        if session is not None:
            sql += " AND session_id = ?"
            params.append(session)
        rows = self._records(sql + " ORDER BY seq DESC LIMIT 1", params)
        return rows[0] if rows else None

    def sessions(self, limit: int = 200) -> list[str]:
        """Session ids, most recently active first (a History filter's choices)."""
        return self._column("session_id", limit)

    def tools(self, limit: int = 200) -> list[str]:
        """Tool names, most recently used first."""
        return self._column("tool", limit)

    def _column(self, column: str, limit: int) -> list[str]:
        with self._lock:
            if self.closed:
                raise JournalError("the journal is closed")
            with self._readable():
                rows = self._db.execute(
                    f"SELECT {column} FROM calls WHERE {column} IS NOT NULL "
                    f"GROUP BY {column} ORDER BY max(seq) DESC LIMIT ?",
                    [_limit(limit)],
                ).fetchall()
        return [str(row[0]) for row in rows]

    def _records(self, sql: str, params: Sequence[object]) -> list[CallRecord]:
        self.ingest_quietly()  # rows `pct apply-patch` spooled since
        with self._lock:
            if self.closed:
                raise JournalError("the journal is closed")
            with self._readable():
                rows = self._db.execute(sql, params).fetchall()
                files = self._patch_files([str(row[1]) for row in rows])
        return [_record(row, files.get(str(row[1]), ())) for row in rows]

    @contextlib.contextmanager
    def _readable(self) -> Iterator[None]:
        """A damaged page becomes a `JournalError` that says what to do, not a traceback."""
        try:
            yield
        except sqlite3.DatabaseError as exc:
            if is_damaged(exc):
                raise damaged(self.path, exc) from None
            raise

    def _patch_files(self, call_ids: list[str]) -> dict[str, tuple[PatchFile, ...]]:
        out: dict[str, list[PatchFile]] = {}
        for start in range(0, len(call_ids), 500):
            chunk = call_ids[start : start + 500]
            marks = ",".join("?" * len(chunk))
            for row in self._db.execute(
                "SELECT call_id, path, before_sha, before_mode, after_sha, after_mode, anchor "
                f"FROM patch_files WHERE call_id IN ({marks}) ORDER BY call_id, idx",
                chunk,
            ):
                out.setdefault(str(row[0]), []).append(
                    PatchFile(
                        str(row[1]),
                        _image(row[2], row[3]),
                        _image(row[4], row[5]),
                        Anchor.from_json(row[6]),
                    )
                )
        return {key: tuple(value) for key, value in out.items()}

    # ----------------------------------------------------------------- spool
    def ingest_spool(self) -> int:
        """Insert the rows one-call processes spooled (`spool.py`) whose authenticator
        matches, oldest first, each once (two processes ingesting at once insert it once),
        then remove their files. A file that fails its check is quarantined and reported
        once (a `journal-check` row, and `notices`). Returns rows inserted.
        Raises `sqlite3.Error`."""
        opened = spool.Spool.open(self.path.parent)
        if opened is None:
            return 0
        with opened as folder:
            try:
                found = folder.rows()
            except OSError as exc:  # a key file pct cannot trust: rows wait, none inserted
                self._notice(
                    f"the journal's spool key cannot be used ({exc}); rows `pct apply-patch` "
                    f"spooled wait; remove {self.path.parent / spool.KEY_NAME} and pct makes "
                    "a new one (rows signed with the old key are then quarantined)"
                )
                return 0
            return self._ingest(folder, found)

    def _ingest(self, folder: spool.Spool, found: list[spool.Spooled]) -> int:
        good: list[tuple[str, CallRecord]] = []
        failed: list[spool.Spooled] = []
        for item in found:
            record = row_record(item.row) if item.row is not None else None
            if record is None:
                failed.append(item if item.problem else item._replace(problem="wrong type"))
            else:
                good.append((item.name, record))
        moved = [item for item in failed if folder.quarantine(item.name)]
        if moved:  # said even when the row below cannot be written (a locked journal)
            self._notice(quarantine_message(moved))
        inserted = 0
        if good or moved:
            with self._write_patiently() as db:
                for _name, record in sorted(good, key=lambda pair: pair[1].time):
                    known = db.execute(
                        "SELECT 1 FROM calls WHERE call_id = ?", (record.call_id,)
                    ).fetchone()
                    if known is None:
                        _insert(db, record)
                        inserted += 1
                if moved:
                    where = str(spool.spool_dir(self.path.parent))
                    _insert(db, quarantine_record(moved, time.time(), where))
        for name, _record in good:
            folder.remove(name)
        return inserted

    def _notice(self, message: str) -> None:
        with self._lock:
            if message not in self.notices:
                self.notices.append(message)

    def take_notices(self) -> list[str]:
        """What went wrong with the spool since the last call (each said once)."""
        with self._lock:
            taken, self.notices[:] = list(self.notices), []
        return taken

    def ingest_quietly(self) -> None:
        """`ingest_spool` where a failure (locked, read-only) only waits for the next try."""
        with contextlib.suppress(sqlite3.Error, JournalError, OSError):
            self.ingest_spool()

    # ----------------------------------------------------------------- pending images
    def resolve_pending(self, call_id: str | None = None) -> int:
        """Name by content address every `pending:` image (of `call_id`, or of every call)
        that `pct apply-patch` left unhashed; an image changed or gone since becomes `lost`
        (that side never matches: undo refuses). Each row is updated only if it still holds
        the marker, so two processes resolving at once agree. Returns images resolved.
        Raises `sqlite3.Error` or OSError (a full disk) — nothing is lost: retried later."""
        low, high = PENDING_PREFIX, PENDING_PREFIX[:-1] + chr(ord(PENDING_PREFIX[-1]) + 1)
        sql = (
            "SELECT call_id, idx, before_sha, after_sha FROM patch_files WHERE "
            "((before_sha >= ? AND before_sha < ?) OR (after_sha >= ? AND after_sha < ?))"
        )
        params: list[object] = [low, high, low, high]
        if call_id is not None:
            sql += " AND call_id = ?"
            params.append(call_id)
        with self._lock:
            if self.closed:
                raise JournalError("the journal is closed")
            rows = self._db.execute(sql, params).fetchall()
        resolved = 0
        for call, idx, *sides in rows:
            for column, marker in zip(("before_sha", "after_sha"), sides, strict=True):
                if not isinstance(marker, str) or not marker.startswith(PENDING_PREFIX):
                    continue
                digest = self.blobs.resolve_marker(marker)
                with self._write_patiently() as db:
                    db.execute(
                        f"UPDATE patch_files SET {column} = ? "
                        f"WHERE call_id = ? AND idx = ? AND {column} = ?",
                        (digest, call, idx, marker),
                    )
                self.blobs.unlink_pending(marker)
                resolved += 1
        return resolved

    # ----------------------------------------------------------------- retention
    def used_bytes(self) -> int:
        """Bytes the journal holds: live database pages plus every blob."""
        with self._lock:
            pages = self._db.execute("PRAGMA page_count").fetchone()[0]
            free = self._db.execute("PRAGMA freelist_count").fetchone()[0]
            size = self._db.execute("PRAGMA page_size").fetchone()[0]
        return int((pages - free) * size) + self.blobs.total_bytes()

    def prune(self, max_bytes: int, max_age_days: float, now: float | None = None) -> int:
        """Delete calls older than `max_age_days`, then the oldest until the journal fits
        `max_bytes`; remove blobs no remaining call refers to. Returns calls deleted."""
        now = time.time() if now is None else now
        deleted = 0
        self.ingest_spool()
        self.resolve_pending()
        with self._write() as db:
            cutoff = now - max_age_days * 86400
            deleted += _delete_where(db, "time < ?", [cutoff])
        self._sweep_blobs(now)
        used = self.used_bytes()
        while used > max_bytes:  # each round removes a tenth of the calls left
            with self._write() as db:
                count = int(db.execute("SELECT count(*) FROM calls").fetchone()[0])
                if count == 0:
                    break
                batch = max(1, count // 10)
                last = db.execute(
                    "SELECT seq FROM calls ORDER BY seq LIMIT 1 OFFSET ?", [batch - 1]
                ).fetchone()[0]
                deleted += _delete_where(db, "seq <= ?", [last])
            self._sweep_blobs(now)
            before, used = used, self.used_bytes()
            if used >= before:
                break  # what is left is in its grace period: the next prune frees it
        return deleted

    def _sweep_blobs(self, now: float) -> None:
        with self._lock:
            referenced = {
                _blob_name(str(row[0]))
                for row in self._db.execute(
                    "SELECT before_sha FROM patch_files WHERE before_sha IS NOT NULL "
                    "UNION SELECT after_sha FROM patch_files WHERE after_sha IS NOT NULL"
                )
            }
        self.blobs.remove_unreferenced(referenced, now)


def _limit(limit: int) -> int:
    """A LIMIT SQLite takes: a huge `--limit` means all rows, never an OverflowError."""
    return max(0, min(int(limit), 2**62))


def _blob_name(image: str) -> str:
    """The file an image column names: its content address, or its pending image's name."""
    if image.startswith(PENDING_PREFIX):
        return image[len(PENDING_PREFIX) :].partition(":")[0]
    return image


def _insert(db: sqlite3.Connection, record: CallRecord) -> int:
    """One call's rows; marks the call an ok undo takes back."""
    size = (
        len(record.summary)
        + len(record.result_text)
        + sum(len(p) for p in record.recovery_paths)
        + sum(len(f.path) + 200 for f in record.patch_files)
        + _ROW_OVERHEAD
    )
    cursor = db.execute(
        "INSERT INTO calls (call_id, time, session_id, client_name, client_version, "
        "model, tool, transport, path, parent_call_id, summary, outcome, error_code, "
        "duration_ms, result_text, recovery_paths, undo_of, undone_by, size) "
        "VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
        (
            record.call_id,
            record.time,
            record.session_id,
            record.client_name,
            record.client_version,
            record.model,
            record.tool,
            record.transport,
            record.path,
            record.parent_call_id,
            record.summary,
            record.outcome,
            record.error_code,
            record.duration_ms,
            record.result_text,
            json.dumps(list(record.recovery_paths)),
            record.undo_of,
            record.undone_by,
            size,
        ),
    )
    db.executemany(
        "INSERT INTO patch_files (call_id, idx, path, before_sha, before_mode, "
        "after_sha, after_mode, anchor) VALUES (?,?,?,?,?,?,?,?)",
        [
            (
                record.call_id,
                index,
                item.path,
                item.before.sha256 if item.before else None,
                item.before.mode if item.before else None,
                item.after.sha256 if item.after else None,
                item.after.mode if item.after else None,
                item.anchor.to_json() if item.anchor else None,
            )
            for index, item in enumerate(record.patch_files)
        ],
    )
    if record.undo_of is not None and record.outcome == "ok":
        db.execute(
            "UPDATE calls SET undone_by = ? WHERE call_id = ? AND undone_by IS NULL",
            (record.call_id, record.undo_of),
        )
    return int(cursor.lastrowid or 0)


def _delete_where(db: sqlite3.Connection, condition: str, params: list[object]) -> int:
    ids = [row[0] for row in db.execute(f"SELECT call_id FROM calls WHERE {condition}", params)]
    for start in range(0, len(ids), 500):
        chunk = ids[start : start + 500]
        marks = ",".join("?" * len(chunk))
        db.execute(f"DELETE FROM patch_files WHERE call_id IN ({marks})", chunk)
        db.execute(f"DELETE FROM calls WHERE call_id IN ({marks})", chunk)
    return len(ids)


def _record(row: Sequence[object], files: tuple[PatchFile, ...]) -> CallRecord:
    def text(value: object) -> str | None:
        return None if value is None else str(value)

    raw_paths = json.loads(str(row[16]) or "[]")
    return CallRecord(
        seq=int(cast(int, row[0])),
        call_id=str(row[1]),
        time=float(cast(float, row[2])),
        session_id=text(row[3]),
        client_name=text(row[4]),
        client_version=text(row[5]),
        model=text(row[6]),
        tool=str(row[7]),
        transport=str(row[8]),
        path=cast("CallPath", str(row[9])),
        parent_call_id=text(row[10]),
        summary=str(row[11]),
        outcome=cast(Outcome, str(row[12])),
        error_code=text(row[13]),
        duration_ms=float(cast(float, row[14])),
        result_text=str(row[15]),
        recovery_paths=tuple(str(p) for p in raw_paths),
        patch_files=files,
        undo_of=text(row[17]),
        undone_by=text(row[18]),
    )
