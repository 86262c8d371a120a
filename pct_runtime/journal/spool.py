"""The journal's spool: rows a one-call process (`pct apply-patch`) leaves for others to insert.

Such a process must not pay for SQLite, the record types and hashing (the benchmark's goal
is ≤ 5% on the whole process), so it writes its row, already redacted, as one JSON file
`<agent dir>/pct/journal-spool/<call id>.json` (0600 in a 0700 folder; written under a
private name and renamed, so a SIGKILL leaves the whole row or none) with its file images
as `pending:` markers. Every process that opens the journal inserts what it finds here
(`Journal.ingest_spool`: on open, before each read, before each batch of the runtime's
writer, before retention) and removes the file once its row is committed.

Light on purpose: json and os only (and `blobs`, which every importer loads anyway).
"""

from __future__ import annotations

import contextlib
import json
import os
import stat
import time
from collections.abc import Iterator
from pathlib import Path

from pct_runtime.journal.blobs import OPEN_CLOEXEC, OPEN_NOFOLLOW, write_all

SPOOL_DIR_NAME = "journal-spool"
SPOOL_VERSION = 1
#: A spooled row larger than this is not ours (rows are bounded far below): removed.
MAX_SPOOL_BYTES = 1_048_576
#: A half-written spool file (a dead writer's private name) older than this is removed.
STALE_SECONDS = 3600.0
DENIED_CODES = frozenset({"policy-denied", "approval-denied"})


def new_call_id() -> str:
    """A short unique call id, what `pct undo CALL_ID` takes."""
    return f"c-{os.urandom(5).hex()}"


def outcome_of(outcome: str, error_code: str | None) -> str:
    """A tool call's journal outcome: a policy or approval refusal is `denied`."""
    if outcome in ("cancelled", "ok"):
        return outcome
    return "denied" if error_code in DENIED_CODES else "error"


def spool_dir(state_dir: Path) -> Path:
    return state_dir / SPOOL_DIR_NAME


def write(state_dir: Path, row: dict[str, object]) -> Path:
    """Spool one row (`row["call_id"]` names the file). Raises OSError (full disk)."""
    os.makedirs(state_dir, mode=0o700, exist_ok=True)
    folder = spool_dir(state_dir)
    with contextlib.suppress(FileExistsError):
        os.mkdir(folder, 0o700)
    if not _real_dir(folder):
        raise NotADirectoryError(f"{folder} is not a directory (a link planted there?)")
    name = f"{row['call_id']}.json"
    temp = folder / f".{name}.{os.getpid()}.tmp"
    data = json.dumps({"v": SPOOL_VERSION, **row}, separators=(",", ":")).encode()
    fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | OPEN_CLOEXEC, 0o600)
    try:
        write_all(fd, data)
    except BaseException:
        os.close(fd)
        with contextlib.suppress(OSError):
            os.unlink(temp)
        raise
    os.close(fd)
    os.replace(temp, folder / name)
    return folder / name


def count(state_dir: Path) -> int:
    """How many rows wait in the spool (one directory read)."""
    folder = spool_dir(state_dir)
    if not _real_dir(folder):
        return 0
    try:
        with os.scandir(folder) as entries:
            return sum(1 for e in entries if e.name.endswith(".json") and e.name[0] != ".")
    except OSError:
        return 0


def read_all(state_dir: Path, now: float | None = None) -> Iterator[tuple[Path, object]]:
    """Every spooled row as (file, parsed JSON — None when unreadable), oldest name first;
    stale private names are removed on the way. Nothing when the folder is missing."""
    folder = spool_dir(state_dir)
    if not _real_dir(folder):
        return  # missing, or a link: never read (nor remove) files where it points
    try:
        entries = sorted(os.scandir(folder), key=lambda entry: entry.name)
    except OSError:
        return
    now = time.time() if now is None else now
    for entry in entries:
        path = Path(entry.path)
        try:
            st = entry.stat(follow_symlinks=False)
        except OSError:
            continue
        if entry.name.startswith("."):
            if st.st_mtime < now - STALE_SECONDS:
                with contextlib.suppress(OSError):
                    os.unlink(path)
            continue
        if not entry.name.endswith(".json"):
            continue
        if not stat.S_ISREG(st.st_mode) or st.st_size > MAX_SPOOL_BYTES:
            yield path, None
            continue
        yield path, _load(path)


def _real_dir(folder: Path) -> bool:
    try:
        return stat.S_ISDIR(os.lstat(folder).st_mode)
    except OSError:
        return False


def _load(path: Path) -> object:
    try:
        fd = os.open(path, os.O_RDONLY | OPEN_NOFOLLOW | OPEN_CLOEXEC)
    except OSError:
        return None
    try:
        with os.fdopen(fd, "rb", closefd=False) as handle:
            return json.loads(handle.read(MAX_SPOOL_BYTES + 1))
    except (OSError, ValueError):
        return None
    finally:
        os.close(fd)
