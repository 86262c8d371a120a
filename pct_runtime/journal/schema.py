"""The journal database's file and schema: what is checked before SQLite opens it, the
pragmas it runs under, and the tables (schema versioned by `PRAGMA user_version`).

WAL with `synchronous = NORMAL`: a committed row survives the death of any process (the
WAL is in the page cache); only a power loss may drop the last commits, never corrupt.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
import stat
from pathlib import Path

SCHEMA_VERSION = 1
BUSY_TIMEOUT_MS = 250
#: Indexes added after schema 1 shipped: created by the first opener that lacks them (an
#: older pct ignores them, so the schema version stays).
_LATER_INDEXES = {
    "calls_tool": "CREATE INDEX IF NOT EXISTS calls_tool ON calls(tool, seq)",
    "calls_outcome": "CREATE INDEX IF NOT EXISTS calls_outcome ON calls(outcome, seq)",
}


#: Columns added after schema 1 shipped, the same way (an older pct names its columns, so
#: it reads and writes such a table unchanged; its rows leave them NULL).
_LATER_COLUMNS = {
    # A changed file's working directory and folder identities (records.Anchor): undo
    # refuses a row without it.
    ("patch_files", "anchor"): "ALTER TABLE patch_files ADD COLUMN anchor TEXT",
}


class JournalError(Exception):
    """The journal could not be opened or written (locked, full disk, a newer schema)."""


def is_damaged(exc: sqlite3.Error) -> bool:
    """SQLite found pages it cannot read (not a lock, not a full disk)."""
    text = str(exc)
    return not isinstance(exc, sqlite3.OperationalError) and (
        "malformed" in text or "not a database" in text or "corrupt" in text
    )


def damaged(path: Path, exc: sqlite3.Error) -> JournalError:
    """What a reader says about a damaged journal: what, where, and what to do."""
    return JournalError(
        f"the journal {path} is damaged ({exc}); move it aside (mv {path} {path}.damaged) "
        "and pct starts a new journal"
    )


def is_busy(exc: sqlite3.OperationalError) -> bool:
    """Another connection holds the lock: worth a short wait and another try."""
    return "locked" in str(exc) or "busy" in str(exc)


_SCHEMA = """
CREATE TABLE IF NOT EXISTS calls (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    call_id TEXT NOT NULL UNIQUE,
    time REAL NOT NULL,
    session_id TEXT,
    client_name TEXT,
    client_version TEXT,
    model TEXT,
    tool TEXT NOT NULL,
    transport TEXT NOT NULL,
    path TEXT NOT NULL,
    parent_call_id TEXT,
    summary TEXT NOT NULL,
    outcome TEXT NOT NULL,
    error_code TEXT,
    duration_ms REAL NOT NULL,
    result_text TEXT NOT NULL,
    recovery_paths TEXT NOT NULL,
    undo_of TEXT,
    undone_by TEXT,
    size INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS calls_session ON calls(session_id, seq);
CREATE INDEX IF NOT EXISTS calls_time ON calls(time);
CREATE INDEX IF NOT EXISTS calls_tool ON calls(tool, seq);
CREATE INDEX IF NOT EXISTS calls_outcome ON calls(outcome, seq);
CREATE TABLE IF NOT EXISTS patch_files (
    call_id TEXT NOT NULL,
    idx INTEGER NOT NULL,
    path TEXT NOT NULL,
    before_sha TEXT,
    before_mode INTEGER,
    after_sha TEXT,
    after_mode INTEGER,
    anchor TEXT,
    PRIMARY KEY (call_id, idx)
);
CREATE INDEX IF NOT EXISTS patch_files_before ON patch_files(before_sha);
CREATE INDEX IF NOT EXISTS patch_files_after ON patch_files(after_sha);
"""


def make_private(path: Path) -> None:
    """The journal and its WAL files back to 0600 (SQLite gives the WAL the database's
    mode, so a hand `chmod 644` would publish every row); a file we do not own is left."""
    for name in (path, Path(f"{path}-wal"), Path(f"{path}-shm")):
        with contextlib.suppress(OSError):
            st = os.stat(name)
            if st.st_mode & 0o077 and st.st_uid == os.geteuid():
                os.chmod(name, 0o600)


def check_file(path: Path) -> None:
    """A journal path that is not a regular file is refused before SQLite opens it (a FIFO
    would block the opener; a directory gives a cryptic error)."""
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return
    if not stat.S_ISREG(st.st_mode):
        kind = "a directory" if stat.S_ISDIR(st.st_mode) else "not a regular file"
        raise JournalError(
            f"cannot open the journal: {path} is {kind}; move it aside and pct starts a new journal"
        )


def prepare(db: sqlite3.Connection) -> None:
    db.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
    mode = db.execute("PRAGMA journal_mode = WAL").fetchone()[0]
    if str(mode).lower() != "wal":
        raise JournalError(f"the journal could not switch to WAL mode ({mode})")
    db.execute("PRAGMA synchronous = NORMAL")
    version = int(db.execute("PRAGMA user_version").fetchone()[0])
    if version > SCHEMA_VERSION:
        raise JournalError(
            f"the journal was written by a newer pct (schema {version}, this pct reads "
            f"{SCHEMA_VERSION}); upgrade pct"
        )
    if version == SCHEMA_VERSION:
        _add_indexes(db)
        _add_columns(db)
        return
    db.execute("BEGIN IMMEDIATE")
    try:
        if int(db.execute("PRAGMA user_version").fetchone()[0]) < SCHEMA_VERSION:
            for statement in _SCHEMA.split(";"):
                if statement.strip():
                    db.execute(statement)
            db.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
    except BaseException:
        db.execute("ROLLBACK")
        raise
    db.execute("COMMIT")


def _add_indexes(db: sqlite3.Connection) -> None:
    names = {
        str(row[0]) for row in db.execute("SELECT name FROM sqlite_master WHERE type = 'index'")
    }
    missing = [sql for name, sql in _LATER_INDEXES.items() if name not in names]
    if not missing:
        return
    db.execute("BEGIN IMMEDIATE")
    try:
        for sql in missing:
            db.execute(sql)
    except BaseException:
        db.execute("ROLLBACK")
        raise
    db.execute("COMMIT")


def _missing_columns(db: sqlite3.Connection) -> list[str]:
    missing = []
    for (table, column), sql in _LATER_COLUMNS.items():
        names = {str(row[1]) for row in db.execute(f"PRAGMA table_info({table})")}
        if column not in names:
            missing.append(sql)
    return missing


def _add_columns(db: sqlite3.Connection) -> None:
    if not _missing_columns(db):
        return
    db.execute("BEGIN IMMEDIATE")
    try:
        for sql in _missing_columns(db):  # again under the lock: another opener may be first
            db.execute(sql)
    except BaseException:
        db.execute("ROLLBACK")
        raise
    db.execute("COMMIT")
