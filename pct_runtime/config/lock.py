"""The cooperative config lock: a directory `<config>.lock/` holding an `owner` record.

The protocol is the original Toolkit's, so that pct and a Pi process running the Toolkit
exclude each other when both save the same file:

- `owner` is `{"pid":<pid>,"token":"<uuid>"}` + newline, one random token per acquisition;
- the lock directory is built beside its destination and published by `rename`, so it never
  exists without an owner record;
- a lock whose owner is dead is taken over through an exclusive `reclaim/` directory (itself
  published with an owner record). A `reclaim/` that has an owner is never removed by
  anyone but its creator (fail closed: the operator deletes it); an empty leftover one is
  removed with `rmdir`, which cannot delete a live replacement;
- liveness: a token registered in this process is live; the same pid with an unknown token
  is a leftover of this process; any other pid is probed with `kill(pid, 0)` (EPERM = alive);
- release removes the lock only while `owner` still carries our token.

Everything here is synchronous; callers serialize same-process saves per lock path with
`process_lock` first, since the filesystem alone cannot tell two threads of one pid apart.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import shutil
import stat
import threading
import uuid
from pathlib import Path

from pct_runtime.config.errors import ConfigSaveError, lock_held_error
from pct_runtime.pids import pid_exists

#: Conflict passes before giving up with `lock-held`.
ACQUIRE_PASSES = 4

_registry_guard = threading.Lock()
_live_tokens: set[str] = set()
_process_locks: dict[str, threading.Lock] = {}

_OCCUPIED = {errno.EEXIST, errno.ENOTEMPTY, errno.EISDIR, errno.ENOTDIR, errno.ENOENT}


def process_lock(lock_path: str) -> threading.Lock:
    """The process-wide mutex for one resolved lock path (shared by every store instance)."""
    with _registry_guard:
        lock = _process_locks.get(lock_path)
        if lock is None:
            lock = _process_locks[lock_path] = threading.Lock()
        return lock


def register_live_token(token: str) -> None:
    with _registry_guard:
        _live_tokens.add(token)


def forget_token(token: str) -> None:
    with _registry_guard:
        _live_tokens.discard(token)


def _is_registered(token: str) -> bool:
    with _registry_guard:
        return token in _live_tokens


#: Whether a process with this pid exists (the lock's owner may be a zombie: still held).
pid_running = pid_exists


class Owner:
    """A parsed owner record."""

    __slots__ = ("pid", "token")

    def __init__(self, pid: int, token: str | None) -> None:
        self.pid = pid
        self.token = token


def parse_owner(contents: str) -> Owner | None:
    """The owner record, or None when it is not a JSON object with a positive integer pid."""
    try:
        parsed = json.loads(contents)
    except (ValueError, RecursionError):
        return None
    if not isinstance(parsed, dict):
        return None
    pid = parsed.get("pid")
    if isinstance(pid, bool):
        return None
    if isinstance(pid, float) and pid.is_integer():
        pid = int(pid)
    if not isinstance(pid, int) or pid <= 0:
        return None
    token = parsed.get("token")
    return Owner(pid, token if isinstance(token, str) else None)


def owner_payload(token: str) -> str:
    return json.dumps({"pid": os.getpid(), "token": token}, separators=(",", ":")) + "\n"


def _is_live(owner: Owner) -> bool:
    if owner.token is not None and _is_registered(owner.token):
        return True
    if owner.pid == os.getpid():
        return False  # our pid, unknown token: a leftover this process abandoned
    return pid_running(owner.pid)


def _held(lock_path: Path, owner: Owner | None = None) -> ConfigSaveError:
    if owner is None:
        return lock_held_error(str(lock_path), None, False)
    return lock_held_error(str(lock_path), owner.pid, pid_running(owner.pid))


def _write_text(path: Path, text: str) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC, 0o666)
    try:
        os.write(fd, text.encode("utf-8"))
    finally:
        os.close(fd)


def _publish(destination: Path, payload: str, token: str) -> bool:
    """Build `<destination>.<pid>.<token>/owner` and rename it into place.

    False when the destination is occupied (or its parent vanished).
    """
    staging = destination.with_name(f"{destination.name}.{os.getpid()}.{token}")
    try:
        os.mkdir(staging)
        _write_text(staging / "owner", payload)
        os.rename(staging, destination)
        return True
    except OSError as exc:
        shutil.rmtree(staging, ignore_errors=True)
        if exc.errno in _OCCUPIED:
            return False
        raise


def _read_owner_file(lock_path: Path) -> str | None:
    try:
        return (lock_path / "owner").read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError):
        raise _held(lock_path) from None


def _inspect_reclaim(lock_path: Path) -> str:
    """`absent`, `live` (an owner record is inside: never removed here) or `abandoned`."""
    reclaim = lock_path / "reclaim"
    try:
        mode = os.stat(reclaim).st_mode
    except FileNotFoundError:
        return "absent"
    except OSError:
        raise _held(lock_path) from None
    if not stat.S_ISDIR(mode):
        with contextlib.suppress(OSError):
            reclaim.unlink()
        return "abandoned"
    try:
        contents: str | None = (reclaim / "owner").read_text(encoding="utf-8")
    except FileNotFoundError:
        contents = None
    except (OSError, UnicodeDecodeError):
        raise _held(lock_path) from None
    if contents is not None:
        if parse_owner(contents) is None:
            raise _held(lock_path)
        return "live"
    try:
        os.rmdir(reclaim)  # only succeeds while still empty
    except OSError:
        return "live"
    return "abandoned"


def _dead_owner(lock_path: Path, text: str) -> Owner:
    """The owner `text` records, when it is provably dead; otherwise `lock-held`: a record
    that cannot be read, or a live owner, keeps the lock."""
    current = parse_owner(text)
    if current is None:
        raise _held(lock_path)
    if _is_live(current):
        raise _held(lock_path, current)
    return current


def acquire(lock_path: Path) -> str:
    """Take the lock and return this acquisition's token, or raise `ConfigSaveError`
    (`lock-held`). Call with `process_lock(str(lock_path))` held."""
    token = str(uuid.uuid4())
    payload = owner_payload(token)
    reclaim = lock_path / "reclaim"
    recorded: Owner | None = None
    for _ in range(ACQUIRE_PASSES):
        if _publish(lock_path, payload, token):
            register_live_token(token)
            return token
        try:
            mode = os.stat(lock_path).st_mode
        except FileNotFoundError:
            continue
        except OSError:
            raise _held(lock_path) from None

        if stat.S_ISREG(mode):
            # A lock *file* is an older protocol: remove it only when its owner is dead.
            try:
                existing = lock_path.read_text(encoding="utf-8")
            except FileNotFoundError:
                continue
            except (OSError, UnicodeDecodeError):
                raise _held(lock_path) from None
            _dead_owner(lock_path, existing)
            with contextlib.suppress(OSError):
                lock_path.unlink()
            continue
        if not stat.S_ISDIR(mode):
            raise _held(lock_path)

        existing_owner = _read_owner_file(lock_path)
        if existing_owner is not None:
            recorded = _dead_owner(lock_path, existing_owner)

        state = _inspect_reclaim(lock_path)
        if state != "absent":
            continue
        if not _publish(reclaim, payload, token):
            continue
        try:
            latest = _read_owner_file(lock_path)
            if latest is not None:
                _dead_owner(lock_path, latest)
            _write_text(lock_path / "owner", payload)
            register_live_token(token)
            return token
        finally:
            try:
                held = parse_owner((reclaim / "owner").read_text(encoding="utf-8"))
            except (OSError, UnicodeDecodeError):
                held = None
            if held is not None and held.token == token:
                shutil.rmtree(reclaim, ignore_errors=True)
    raise _held(lock_path, recorded)


def release(lock_path: Path, token: str) -> None:
    """Remove the lock if `owner` still carries `token`; the token leaves the registry anyway."""
    try:
        try:
            current = parse_owner((lock_path / "owner").read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError):
            return
        if current is None or current.token != token:
            return
        try:
            (lock_path / "owner").unlink()
        except OSError:
            return
        with contextlib.suppress(OSError):
            os.rmdir(lock_path)
    finally:
        forget_token(token)


def sweep_dead_staging(lock_path: Path) -> None:
    """Remove publish staging directories left by writers that died mid-acquire.

    Only entries whose pid is not running (or is ours: same-process saves are serialized,
    so none of ours is in flight) are removed. Call while holding the lock.
    """
    for parent, prefix in ((lock_path.parent, lock_path.name), (lock_path, "reclaim")):
        try:
            names = os.listdir(parent)
        except OSError:
            continue
        for name in names:
            pid = _staging_pid(name, prefix)
            if pid is None:
                continue
            if pid == os.getpid() or not pid_running(pid):
                shutil.rmtree(parent / name, ignore_errors=True)


def _staging_pid(name: str, prefix: str) -> int | None:
    if not name.startswith(prefix + "."):
        return None
    rest = name[len(prefix) + 1 :]
    pid_text, sep, token = rest.partition(".")
    if not sep or not token or not pid_text.isdigit():
        return None
    try:
        uuid.UUID(token)
    except ValueError:
        return None
    return int(pid_text)
