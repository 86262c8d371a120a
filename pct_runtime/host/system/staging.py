"""Names of staged files (a patch's new contents, undo's restored files), and removing the
ones a dead writer left behind.

A writer stages each new content as `.pct-apply-patch-<pid>-<32 hex>.tmp` next to its target and
renames it into place. A writer killed between the two leaves the staging file behind; the
next patch that touches the directory removes it when no process with that pid is alive.
A pid reused by an unrelated process keeps its file (never remove what may be in use).
"""

from __future__ import annotations

import contextlib
import os
import re
import stat
from collections.abc import Iterable

from pct_runtime.pids import pid_exists

_PREFIX = ".pct-apply-patch-"
_STAGING_NAME = re.compile(r"\.pct-apply-patch-(\d+)-[0-9a-f]{32}\.tmp")


def staging_name() -> str:
    """A fresh staging file name for this process (checked by `pathlimits` for length)."""
    # 128 random bits as 32 hex digits, like uuid4().hex; `uuid` would import `platform`,
    # a few ms of `pct apply-patch` start-up.
    return f"{_PREFIX}{os.getpid()}-{os.urandom(16).hex()}.tmp"


def _alive(pid: int) -> bool:
    if pid == os.getpid():
        return True  # another apply in this process may be staging right now
    if pid <= 0:
        return True  # not a pid we could have written: leave it alone
    return pid_exists(pid)


def remove_stale_staging(folders: Iterable[int]) -> list[str]:
    """Remove dead writers' staging files (regular files only) in the folders held open as
    `folders` (never by path: a folder swapped for a link must not lead outside); return
    their names."""
    removed: list[str] = []
    for folder in dict.fromkeys(folders):
        try:
            names = os.listdir(folder)
        except OSError:
            continue
        for name in names:
            if not name.startswith(_PREFIX):
                continue
            match = _STAGING_NAME.fullmatch(name)
            if match is None or _alive(int(match.group(1))):
                continue
            with contextlib.suppress(OSError):
                if stat.S_ISREG(os.lstat(name, dir_fd=folder).st_mode):
                    os.unlink(name, dir_fd=folder)
                    removed.append(name)
    return removed


_IOV_BATCH = 512  # well under IOV_MAX (1024 on Linux)


def write_all(fd: int, pieces: Iterable[bytes | memoryview]) -> None:
    """Write every piece in order with few system calls (an edit is often one short line)."""
    batch: list[memoryview] = []
    for piece in pieces:
        if len(piece):
            batch.append(memoryview(piece))
            if len(batch) == _IOV_BATCH:
                _writev_all(fd, batch)
                batch = []
    if batch:
        _writev_all(fd, batch)


def _writev_all(fd: int, views: list[memoryview]) -> None:
    while views:
        written = os.writev(fd, views)
        done = 0
        while done < len(views) and written >= len(views[done]):
            written -= len(views[done])
            done += 1
        views = views[done:]
        if views and written:
            views[0] = views[0][written:]
