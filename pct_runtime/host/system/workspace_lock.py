"""One OS lock per working directory, shared by a patch's commit and by undo.

Without it an undo and a patch of the same file can both check the file, both write it and
both report success: one change is lost. A patch holds the lock from its last recheck of
the sources to its post-images, undo from its check of the files to its last rename, so the
one that comes second sees what the first changed and refuses.

The lock file is `<agent dir>/pct/locks/<hash of the workspace's real path>.lock` (0600 in
a 0700 folder): pct's own state, which the sandbox hides from jobs, so no job can hold it
or put something in its place. The folder and the file are opened from directory
descriptors without following links. `fcntl.flock` (not the `filelock` package: importing
it costs `pct apply-patch` tens of milliseconds): the kernel drops the lock when its holder
dies, so a killed process never leaves the workspace locked.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import stat
import time
import zlib
from collections.abc import Callable

from pct_runtime.host.system.folders import path_text

TYPE_CHECKING = False  # see pct_runtime.tuples
if TYPE_CHECKING:
    from pathlib import Path

LOCKS_DIR_NAME = "locks"
#: How long a patch or an undo waits for the other before it gives up, changing nothing.
WAIT_SECONDS = 60.0
_OPEN_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_OPEN_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_OPEN_DIRECTORY = getattr(os, "O_DIRECTORY", 0)


class LockTimeoutError(Exception):
    """Another process held the workspace lock for `WAIT_SECONDS`."""


class LockAbortedError(Exception):
    """The caller's abort check turned true while waiting for the lock."""


def locks_dir(agent_dir: Path | str) -> Path:
    """Where the workspace locks of `agent_dir` live (pct's own state folder)."""
    from pathlib import Path

    return Path(locks_folder(agent_dir))


def locks_folder(agent_dir: str | os.PathLike[str]) -> str:
    """`locks_dir` as a string, for `pct apply-patch`: pathlib (with `urllib.parse` and
    `ipaddress` under it) costs that process ~4 ms."""
    return path_text(agent_dir, "pct", LOCKS_DIR_NAME)


def lock_name(root: str) -> str:
    """The lock file's name for workspace `root` (a real path). Two 32-bit checksums: a
    collision only makes two workspaces take turns, and `zlib` is loaded already where
    `hashlib` would cost `pct apply-patch` milliseconds."""
    data = os.fsencode(root)
    return f"{zlib.crc32(data):08x}{zlib.adler32(data):08x}.lock"


def _open_lock_file(folder: str | os.PathLike[str], root: str) -> int:
    """The lock file, created 0600; the `locks` folder 0700, neither through a link."""
    # `folder.parent` and `folder.name` of a Path, without pathlib.
    parent_name, name = os.path.split(path_text(folder))
    parent_name = parent_name or "."
    os.makedirs(parent_name, mode=0o700, exist_ok=True)
    parent = os.open(parent_name, os.O_RDONLY | _OPEN_DIRECTORY | _OPEN_CLOEXEC)
    try:
        with contextlib.suppress(FileExistsError):
            os.mkdir(name, 0o700, dir_fd=parent)
        dir_flags = os.O_RDONLY | _OPEN_DIRECTORY | _OPEN_NOFOLLOW | _OPEN_CLOEXEC
        locks = os.open(name, dir_flags, dir_fd=parent)
    finally:
        os.close(parent)
    try:
        flags = os.O_RDWR | os.O_CREAT | _OPEN_NOFOLLOW | _OPEN_CLOEXEC
        fd = os.open(lock_name(root), flags, 0o600, dir_fd=locks)
    finally:
        os.close(locks)
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise OSError(f"{path_text(folder, lock_name(root))} is not a regular file")
        if stat.S_IMODE(st.st_mode) != 0o600 and st.st_uid == os.geteuid():
            os.fchmod(fd, 0o600)
    except BaseException:
        os.close(fd)
        raise
    return fd


class WorkspaceLock:
    """The held lock of one workspace; `release` (or leaving a `with`) lets the next go."""

    def __init__(self, fd: int) -> None:
        self._fd: int | None = fd

    @classmethod
    def acquire(
        cls,
        folder: str | os.PathLike[str],
        root: str,
        should_abort: Callable[[], bool] | None = None,
        wait: float = WAIT_SECONDS,
    ) -> WorkspaceLock:
        """Wait for the lock of workspace `root` (its real path) in `folder`.

        Raises OSError when the lock file cannot be opened, `LockTimeoutError` after `wait`
        seconds, `LockAbortedError` when `should_abort()` turns true while waiting (polled,
        so a cancelled patch never sits in a blocking call)."""
        fd = _open_lock_file(folder, root)
        try:
            deadline = time.monotonic() + wait
            pause = 0.002
            while True:
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    return cls(fd)
                except BlockingIOError:
                    pass
                if should_abort is not None and should_abort():
                    raise LockAbortedError()
                if time.monotonic() >= deadline:
                    raise LockTimeoutError()
                time.sleep(pause)
                pause = min(pause * 2, 0.05)
        except BaseException:
            os.close(fd)
            raise

    def release(self) -> None:
        if self._fd is not None:
            fd, self._fd = self._fd, None
            os.close(fd)  # closing the last descriptor releases the lock

    def __enter__(self) -> WorkspaceLock:
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()
