"""Start-up sweep of capture folders whose runtime died without cleaning up.

A folder is named `pct-output-<pid>-<start ticks>-<random>` after the process that created
it. It is stale when that exact process (pid *and* start time, so a reused pid does not
count) no longer runs. Only folders of the current user are touched, and only the way the
owner itself would: its `*.txt` files, then the empty folder — never recursively, never
through a symlink. Folders without a process tag (older versions) are left alone.
"""

from __future__ import annotations

import os
import re
import tempfile

from pct_runtime.host.procs import same_process_alive
from pct_runtime.output.capture import DIR_PREFIX

_TAGGED = re.compile(re.escape(DIR_PREFIX) + r"(\d+)-(\d+)-[^/]+\Z")


def _remove_folder(path: str) -> bool:
    try:
        for entry in os.listdir(path):
            if entry.endswith(".txt"):
                target = os.path.join(path, entry)
                if os.path.isfile(target) and not os.path.islink(target):
                    os.unlink(target)
        os.rmdir(path)
    except OSError:
        return False
    return True


def sweep_stale_output_dirs(temp_root: str | os.PathLike[str] | None = None) -> list[str]:
    """Remove capture folders under `temp_root` (default: the OS temp dir) whose owner is
    gone. Returns the folders removed."""
    root = os.fspath(temp_root) if temp_root is not None else tempfile.gettempdir()
    try:
        names = os.listdir(root)
    except OSError:
        return []
    uid = os.getuid()
    removed: list[str] = []
    for name in names:
        match = _TAGGED.match(name)
        if match is None:
            continue
        pid, ticks = int(match.group(1)), int(match.group(2))
        if same_process_alive(pid, ticks):
            continue
        path = os.path.join(root, name)
        try:
            st = os.lstat(path)
        except OSError:
            continue
        if not os.path.isdir(path) or os.path.islink(path) or st.st_uid != uid:
            continue
        if _remove_folder(path):
            removed.append(path)
    return removed
