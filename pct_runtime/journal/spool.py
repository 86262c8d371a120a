"""The journal's spool: rows a one-call process (`pct apply-patch`) leaves for others to insert.

Such a process must not pay for SQLite, the record types and hashing (the benchmark's goal
is ≤ 5% on the whole process), so it writes its row, already redacted, as one JSON file
`<agent dir>/pct/journal-spool/<call id>.json` (0600 in a 0700 folder; written under a
private name and renamed, so a SIGKILL leaves the whole row or none) with its file images
as `pending:` markers. Every process that opens the journal inserts what it finds here
(`Journal.ingest_spool`: on open, before each read, before each batch of the runtime's
writer, before retention) and removes the file once its row is committed.

A row is trusted only with its authenticator: an HMAC-SHA256 over its canonical bytes
(`mac`) under a key only pct's own processes read (`journal-spool.key`, 0600, made on first
need). A job that can write the agent dir could otherwise plant a row `pct undo` would honour
for any path. A row that fails the check is moved to `quarantine/`, never inserted. Every
file is reached from directory fds opened without following links.

Light on purpose: json and os, the built-in SHA-256 for the MAC (no OpenSSL), and `blobs`,
which every importer loads anyway.
"""

from __future__ import annotations

import contextlib
import errno
import importlib
import json
import os
import stat
import time
from collections.abc import Callable

from pct_runtime.host.system.folders import path_text
from pct_runtime.journal.blobs import OPEN_CLOEXEC, OPEN_NOFOLLOW, write_all
from pct_runtime.tuples import NamedTuple

TYPE_CHECKING = False  # `typing` stays unloaded on `pct apply-patch` (see pct_runtime.tuples)
if TYPE_CHECKING:
    from pathlib import Path
    from typing import Protocol

    class _Hash(Protocol):
        def digest(self) -> bytes: ...
        def hexdigest(self) -> str: ...


SPOOL_DIR_NAME = "journal-spool"
QUARANTINE_DIR_NAME = "quarantine"
KEY_NAME = "journal-spool.key"
KEY_BYTES = 32
SPOOL_VERSION = 1
MAC_FIELD = "mac"
#: A spooled row larger than this is not ours (rows are bounded far below).
MAX_SPOOL_BYTES = 1_048_576
#: A half-written spool file (a dead writer's private name) older than this is removed.
STALE_SECONDS = 3600.0
#: Quarantined files kept at most; past it a failing row is removed instead.
QUARANTINE_LIMIT = 200
DENIED_CODES = frozenset({"policy-denied", "approval-denied", "command-denied"})
_DIR_FLAGS = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | OPEN_NOFOLLOW | OPEN_CLOEXEC
_MAC_CONTEXT = b"pct journal spool row v1\0"
_BLOCK = 64  # SHA-256's block size
_HEX = frozenset("0123456789abcdef")


class SpoolError(OSError):
    """The spool or its key cannot be used (a link planted, a foreign key file)."""


def new_call_id() -> str:
    """A short unique call id, what `pct undo CALL_ID` takes."""
    return f"c-{os.urandom(5).hex()}"


def outcome_of(outcome: str, error_code: str | None) -> str:
    """A tool call's journal outcome: a policy or approval refusal is `denied`."""
    if outcome in ("cancelled", "ok"):
        return outcome
    return "denied" if error_code in DENIED_CODES else "error"


def spool_dir(state_dir: str | os.PathLike[str]) -> str:
    return os.path.join(state_dir, SPOOL_DIR_NAME)


def is_spool_name(name: str) -> bool:
    """`c-<10 hex>.json`: the only names `write` makes."""
    stem, dot, ext = name.partition(".")
    return (
        ext == "json"
        and dot == "."
        and len(stem) == 12
        and stem.startswith("c-")
        and set(stem[2:]) <= _HEX
    )


def open_dir(
    name: str | os.PathLike[str], *, parent: int | None = None, create: bool = False
) -> int:
    """An fd of the directory `name` (relative to `parent` when given), never through a link.

    Raises FileNotFoundError when missing (and not `create`), SpoolError when it is not a
    real directory."""
    if create:
        with contextlib.suppress(FileExistsError):
            os.mkdir(name, 0o700, dir_fd=parent)
    try:
        return os.open(name, _DIR_FLAGS, dir_fd=parent)
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.ENOTDIR):
            raise SpoolError(f"{name} is not a directory (a link planted there?)") from None
        raise


# ------------------------------------------------------------------ the key
def _read_key(state_fd: int) -> bytes:
    fd = os.open(KEY_NAME, os.O_RDONLY | OPEN_NOFOLLOW | OPEN_CLOEXEC, dir_fd=state_fd)
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_uid != os.geteuid():
            raise SpoolError(f"{KEY_NAME} is not a regular file of this user")
        if st.st_mode & 0o077:
            raise SpoolError(f"{KEY_NAME} is readable by others (mode {st.st_mode & 0o777:o})")
        key = os.read(fd, KEY_BYTES + 1)
    finally:
        os.close(fd)
    if len(key) != KEY_BYTES:
        raise SpoolError(f"{KEY_NAME} is not a key pct made ({len(key)} bytes)")
    return key


def load_key(state_fd: int, *, create: bool) -> bytes | None:
    """The spool key; made (exclusively, 0600) when missing and `create`, else None.

    Raises SpoolError when a file is there that pct cannot trust (remove it: pct makes a new
    one; rows signed with the old key are then quarantined)."""
    try:
        return _read_key(state_fd)
    except FileNotFoundError:
        if not create:
            return None
    temp = f".{KEY_NAME}.{os.getpid()}.{os.urandom(4).hex()}.tmp"
    fd = os.open(
        temp,
        os.O_WRONLY | os.O_CREAT | os.O_EXCL | OPEN_NOFOLLOW | OPEN_CLOEXEC,
        0o600,
        dir_fd=state_fd,
    )
    try:
        write_all(fd, os.urandom(KEY_BYTES))
        os.fsync(fd)
    finally:
        os.close(fd)
    try:
        # link() never replaces: two first writers agree on whichever key landed first.
        os.link(temp, KEY_NAME, src_dir_fd=state_fd, dst_dir_fd=state_fd, follow_symlinks=False)
    except FileExistsError:
        pass
    finally:
        with contextlib.suppress(OSError):
            os.unlink(temp, dir_fd=state_fd)
    return _read_key(state_fd)


def canonical(row: dict[str, object]) -> bytes:
    """The bytes a row's authenticator covers: every field but `mac`, keys sorted."""
    body = {key: value for key, value in row.items() if key != MAC_FIELD}
    return json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=True).encode()


def _sha256() -> Callable[[bytes], _Hash]:
    """The interpreter's built-in SHA-256: `hashlib`/`hmac` load OpenSSL, 2.5 ms of CPU that
    `pct apply-patch` would pay on every run for one small digest."""
    for name in ("_sha2", "_sha256"):  # 3.12 renamed it
        try:
            sha256: Callable[[bytes], _Hash] = importlib.import_module(name).sha256
            return sha256
        except (ImportError, AttributeError):
            continue
    import hashlib  # pragma: no cover - an interpreter built without it

    return hashlib.sha256


def hmac_sha256(key: bytes, message: bytes) -> str:
    """HMAC-SHA256 (RFC 2104) as hex; a test keeps it equal to `hmac.new(…, "sha256")`."""
    sha256 = _sha256()
    if len(key) > _BLOCK:
        key = sha256(key).digest()
    key = key.ljust(_BLOCK, b"\0")
    inner = sha256(bytes(b ^ 0x36 for b in key) + message).digest()
    return sha256(bytes(b ^ 0x5C for b in key) + inner).hexdigest()


def mac_of(key: bytes, row: dict[str, object]) -> str:
    """A row's authenticator: HMAC-SHA256 under the spool key over its canonical bytes."""
    return hmac_sha256(key, _MAC_CONTEXT + canonical(row))


# ------------------------------------------------------------------ writing
def write(state_dir: str | os.PathLike[str], row: dict[str, object]) -> str:
    """Spool one row (`row["call_id"]` names the file), signed; return its path. Raises
    OSError (full disk, SpoolError for a planted link or an untrusted key)."""
    # `Path(state_dir).parent`, without pathlib (`pct apply-patch` does not load it).
    os.makedirs(os.path.dirname(path_text(state_dir)) or ".", mode=0o700, exist_ok=True)
    state_fd = open_dir(state_dir, create=True)
    try:
        key = load_key(state_fd, create=True)
        assert key is not None
        folder = open_dir(SPOOL_DIR_NAME, parent=state_fd, create=True)
    finally:
        os.close(state_fd)
    try:
        name = f"{row['call_id']}.json"
        signed: dict[str, object] = {"v": SPOOL_VERSION, **row}
        signed[MAC_FIELD] = mac_of(key, signed)
        data = json.dumps(signed, separators=(",", ":")).encode()
        temp = f".{name}.{os.getpid()}.tmp"
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | OPEN_NOFOLLOW | OPEN_CLOEXEC
        fd = os.open(temp, flags, 0o600, dir_fd=folder)
        try:
            write_all(fd, data)
        except BaseException:
            os.close(fd)
            with contextlib.suppress(OSError):
                os.unlink(temp, dir_fd=folder)
            raise
        os.close(fd)
        os.replace(temp, name, src_dir_fd=folder, dst_dir_fd=folder)
    finally:
        os.close(folder)
    return os.path.join(spool_dir(state_dir), name)


def count(state_dir: str | os.PathLike[str]) -> int:
    """How many rows wait in the spool (one directory read)."""
    try:
        state_fd = open_dir(state_dir)
    except OSError:
        return 0
    try:
        folder = open_dir(SPOOL_DIR_NAME, parent=state_fd)
    except OSError:
        return 0
    finally:
        os.close(state_fd)
    try:
        return sum(1 for name in os.listdir(folder) if name.endswith(".json") and name[0] != ".")
    except OSError:
        return 0
    finally:
        os.close(folder)


# ------------------------------------------------------------------ reading
class Spooled(NamedTuple):
    """One spool file: its row when it passed every check, else why it failed."""

    name: str
    row: dict[str, object] | None
    problem: str | None = None


class Spool:
    """The spool folder held open (fds of it and of `pct/`) while its rows are read, inserted
    and removed; the key is read only when there is a row to check."""

    def __init__(self, state: int, folder: int) -> None:
        self._state = state
        self._fd = folder
        self._key: bytes | None = None

    @classmethod
    def open(cls, state_dir: Path) -> Spool | None:
        """None when there is no spool (or it is a planted link: never read through one)."""
        try:
            state_fd = open_dir(state_dir)
        except OSError:
            return None
        try:
            folder = open_dir(SPOOL_DIR_NAME, parent=state_fd)
        except OSError:
            os.close(state_fd)
            return None
        return cls(state_fd, folder)

    def close(self) -> None:
        for fd in (self._fd, self._state):
            if fd >= 0:
                os.close(fd)
        self._fd = self._state = -1

    def __enter__(self) -> Spool:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def rows(self, now: float | None = None) -> list[Spooled]:
        """Every spooled file, oldest name first, checked; stale private names removed.
        Raises SpoolError when the key file is one pct cannot trust (nothing is checked:
        the rows wait)."""
        try:
            names = sorted(os.listdir(self._fd))
        except OSError:
            return []
        now = time.time() if now is None else now
        found: list[Spooled] = []
        for name in names:
            if name.startswith("."):
                with contextlib.suppress(OSError):
                    st = os.stat(name, dir_fd=self._fd, follow_symlinks=False)
                    if st.st_mtime < now - STALE_SECONDS:
                        os.unlink(name, dir_fd=self._fd)
                continue
            if name == QUARANTINE_DIR_NAME:
                continue
            if self._key is None:
                self._key = load_key(self._state, create=False) or b""
            found.append(self._check(name))
        return found

    def _check(self, name: str) -> Spooled:
        if not is_spool_name(name):
            return Spooled(name, None, "not a name pct writes")
        try:
            fd = os.open(name, os.O_RDONLY | os.O_NONBLOCK | OPEN_NOFOLLOW | OPEN_CLOEXEC,
                         dir_fd=self._fd)  # fmt: skip
        except OSError:
            return Spooled(name, None, "not a regular file")
        try:
            st = os.fstat(fd)
            if not stat.S_ISREG(st.st_mode):
                return Spooled(name, None, "not a regular file")
            if st.st_size > MAX_SPOOL_BYTES:
                return Spooled(name, None, "oversize")
            with os.fdopen(fd, "rb", closefd=False) as handle:
                data = handle.read(MAX_SPOOL_BYTES + 1)
        except OSError:
            return Spooled(name, None, "unreadable")
        finally:
            os.close(fd)
        if len(data) > MAX_SPOOL_BYTES:
            return Spooled(name, None, "oversize")
        try:
            row = json.loads(data)
        except ValueError:
            return Spooled(name, None, "unparsable")
        if not isinstance(row, dict):
            return Spooled(name, None, "not a row")
        return self._verify(name, row)

    def _verify(self, name: str, row: dict[str, object]) -> Spooled:
        import hmac

        mac = row.get(MAC_FIELD)
        if not isinstance(mac, str):
            return Spooled(name, None, "no authenticator")
        expected = mac_of(self._key, row).encode() if self._key else b""
        # Bytes: compare_digest refuses a str with non-ASCII characters (a forger's choice).
        if not expected or not hmac.compare_digest(mac.encode(errors="replace"), expected):
            return Spooled(name, None, "bad authenticator")
        if row.get("v") != SPOOL_VERSION or f"{row.get('call_id')}.json" != name:
            return Spooled(name, None, "not a row of this pct")
        return Spooled(name, row)

    def remove(self, name: str) -> None:
        with contextlib.suppress(OSError):
            os.unlink(name, dir_fd=self._fd)

    def quarantine(self, name: str) -> bool:
        """Move a failing file to `quarantine/` (removed when that is full or unusable).
        False when it was gone already (another process took it: that one reports it)."""
        try:
            folder = open_dir(QUARANTINE_DIR_NAME, parent=self._fd, create=True)
        except OSError:
            return self._remove_any(name)
        try:
            if len(os.listdir(folder)) >= QUARANTINE_LIMIT:
                return self._remove_any(name)
            target = f"{name}.{int(time.time())}.{os.urandom(3).hex()}.bad"
            os.rename(name, target, src_dir_fd=self._fd, dst_dir_fd=folder)
            return True
        except FileNotFoundError:
            return False
        except OSError:
            return self._remove_any(name)
        finally:
            os.close(folder)

    def _remove_any(self, name: str) -> bool:
        """Remove a file, or an empty folder, planted under a row's name; False when it
        was gone already or cannot be removed (a read-only spool)."""
        try:
            try:
                os.unlink(name, dir_fd=self._fd)
            except IsADirectoryError:
                os.rmdir(name, dir_fd=self._fd)
        except OSError:  # gone already, or it cannot go: never read all the same
            return False
        return True
