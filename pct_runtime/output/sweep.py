"""Start-up sweep of capture folders whose runtime died without cleaning up.

A folder is named `pct-output-<pid>-<start ticks>-<random>` after the process that created
it. It is stale when that exact process (pid *and* start time, so a reused pid does not
count) no longer runs. Only what pct itself creates is touched, and only the way the owner
would: in a 0700 folder of the current user, its regular `<uuid>.txt` files, then the empty
folder — never recursively, never through a symlink. Every step is relative to a directory
descriptor (the capture root's, then the folder's, opened `O_NOFOLLOW`): a folder swapped or
exchanged (`renameat2(RENAME_EXCHANGE)`) while the sweep runs can at worst make it delete
inside its own folders, never outside. Folders without a process tag (older versions) are
left alone. `host/system/lifeline_watch.py` keeps a stdlib-only copy of `remove_folder`.
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Callable

from pct_runtime.host.system.procs import same_process_alive
from pct_runtime.output.capture import DIR_PREFIX
from pct_runtime.output.root import DIR_FLAGS, CaptureRoot, open_given_root, process_capture_root

_TAGGED = re.compile(re.escape(DIR_PREFIX) + r"(\d+)-(\d+)-[^/]+\Z")
# The only names pct gives recovery files.
RECOVERY_NAME = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\.txt\Z")


def _ours(st: os.stat_result) -> bool:
    return st.st_uid == os.geteuid()


def remove_folder(root_fd: int, name: str) -> bool:
    """Remove the capture folder `name` under `root_fd` the way its owner would. True when
    it is gone; False when it was not a capture folder of ours or could not be emptied."""
    try:
        st = os.stat(name, dir_fd=root_fd, follow_symlinks=False)
        if not stat.S_ISDIR(st.st_mode) or not _ours(st) or stat.S_IMODE(st.st_mode) & 0o077:
            return False
        fd = os.open(name, DIR_FLAGS, dir_fd=root_fd)
    except OSError:
        return False
    try:
        held = os.fstat(fd)
        if (held.st_dev, held.st_ino) != (st.st_dev, st.st_ino):
            return False  # swapped between the check and the open
        for entry in os.listdir(fd):
            if not RECOVERY_NAME.match(entry):
                continue
            try:
                est = os.stat(entry, dir_fd=fd, follow_symlinks=False)
                if stat.S_ISREG(est.st_mode) and _ours(est):
                    os.unlink(entry, dir_fd=fd)
            except FileNotFoundError:
                continue
        now = os.stat(name, dir_fd=root_fd, follow_symlinks=False)
        if (now.st_dev, now.st_ino) != (held.st_dev, held.st_ino):
            return False
        os.rmdir(name, dir_fd=root_fd)  # an empty folder only: never recursive
    except OSError:
        return False
    finally:
        os.close(fd)
    return True


def sweep_folders(root: CaptureRoot, stale: Callable[[str], bool]) -> list[str]:
    """Remove the capture folders under `root` whose name `stale` accepts; their paths."""
    try:
        names = os.listdir(root.fd)
    except OSError:
        return []
    return [
        os.path.join(root.path, name)
        for name in names
        if name.startswith(DIR_PREFIX) and stale(name) and remove_folder(root.fd, name)
    ]


def _owner_gone(name: str) -> bool:
    match = _TAGGED.match(name)
    if match is None:
        return False
    return not same_process_alive(int(match.group(1)), int(match.group(2)))


def sweep_stale_output_dirs(root: str | os.PathLike[str] | None = None) -> list[str]:
    """Remove capture folders under `root` (default: the capture root) whose owner is gone.
    Returns the folders removed."""
    try:
        opened = process_capture_root() if root is None else open_given_root(root)
    except OSError:
        return []
    try:
        return sweep_folders(opened, _owner_gone)
    finally:
        if root is not None:
            os.close(opened.fd)
