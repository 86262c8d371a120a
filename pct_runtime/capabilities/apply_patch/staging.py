"""Names of staged files, and removing the ones a dead writer left behind.

A writer stages each new content as `.pct-apply-patch-<pid>-<32 hex>.tmp` next to its target and
renames it into place. A writer killed between the two leaves the staging file behind; the
next patch that touches the directory removes it when no process with that pid is alive.
A pid reused by an unrelated process keeps its file (never remove what may be in use).
"""

from __future__ import annotations

import contextlib
import os
import re
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


def remove_stale_staging(directories: Iterable[str]) -> list[str]:
    """Remove dead writers' staging files (regular files only) in `directories`; return them."""
    removed: list[str] = []
    for directory in dict.fromkeys(directories):
        try:
            entries = os.scandir(directory)
        except OSError:
            continue
        with entries:
            for entry in entries:
                if not entry.name.startswith(_PREFIX):
                    continue
                match = _STAGING_NAME.fullmatch(entry.name)
                if match is None or _alive(int(match.group(1))):
                    continue
                with contextlib.suppress(OSError):
                    if entry.is_file(follow_symlinks=False):
                        os.unlink(entry.path)
                        removed.append(entry.path)
    return removed
