"""The one pid probe: does a process exist, and is it still running (not a zombie)?

The config lock, the runtime registry of `pct serve`, the lifeline and the apply_patch
staging sweep all ask this; it lives below every layer so each can.
"""

from __future__ import annotations

import os


def pid_exists(pid: int) -> bool:
    """Whether a process with this pid exists (EPERM means it does, owned by someone else).

    A zombie (exited, not yet reaped) still exists; `pid_alive` excludes it.
    """
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    except (OverflowError, ValueError):
        return False  # beyond any pid the system can hand out
    return True


def proc_stat_fields(pid: int) -> list[str] | None:
    """`/proc/<pid>/stat` after the command name (which may hold spaces or parentheses);
    None when the process is gone or there is no procfs (macOS)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            raw = fh.read()
    except OSError:
        return None
    return raw[raw.rfind(b")") + 2 :].decode("ascii", "replace").split()


def pid_alive(pid: int) -> bool:
    """The process exists and is not a zombie (a killed child its parent has not reaped yet
    still answers `kill(pid, 0)`, but it will never run again). Without procfs, existing
    is all there is to know."""
    if not pid_exists(pid):
        return False
    fields = proc_stat_fields(pid)
    return fields is None or fields[:1] not in (["Z"], ["X"])
