"""Process identity: is the process that wrote a record still the one running under its pid?

A pid alone is not an identity — after a crash the number can be handed to an unrelated
process. On Linux a process is identified by its pid plus its start time (clock ticks since
boot, field 22 of `/proc/<pid>/stat`), which no later process with the same pid can share.
Where there is no procfs (macOS) only the pid can be checked.

And whether a process group still has a live member: a shell job and a Code Mode worker
are settled only when their whole group is gone.
"""

from __future__ import annotations

import errno
import os
import sys

from pct_runtime.pids import pid_alive, proc_stat_fields

_stat_fields = proc_stat_fields


def start_ticks(pid: int) -> int | None:
    """The process's start time in clock ticks since boot, or None (gone, or no procfs)."""
    fields = _stat_fields(pid)
    if fields is None or len(fields) < 20:
        return None
    try:
        return int(fields[19])
    except ValueError:
        return None


def process_tag(pid: int | None = None) -> str:
    """`<pid>-<start ticks>` of a process (default: this one); ticks are 0 without procfs."""
    pid = os.getpid() if pid is None else pid
    return f"{pid}-{start_ticks(pid) or 0}"


_exists = pid_alive  # a zombie never runs again


def same_process_alive(pid: int, ticks: int) -> bool:
    """True while the process tagged `<pid>-<ticks>` runs (ticks 0: only the pid is known)."""
    if pid <= 0 or not _exists(pid):
        return False
    if ticks <= 0:
        return True
    now = start_ticks(pid)
    return now is None or now == ticks


def started_at(pid: int) -> float | None:
    """Wall-clock start time of a process (Linux), or None when it cannot be told."""
    ticks = start_ticks(pid)
    if ticks is None:
        return None
    try:
        with open("/proc/stat", "rb") as fh:
            for line in fh:
                if line.startswith(b"btime "):
                    return int(line.split()[1]) + ticks / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError):
        return None
    return None


def alive_since(pid: int, recorded_at: float, *, slack: float = 2.0) -> bool:
    """True while `pid` runs and was already running at `recorded_at` (wall clock).

    A process that started after the record was written is a different process that got
    the same pid: the record's owner is gone.
    """
    if pid <= 0 or not _exists(pid):
        return False
    began = started_at(pid)
    return began is None or recorded_at <= 0 or began <= recorded_at + slack


def pidfd_pid(pidfd: int) -> int:
    """The pid, in this process's PID namespace, of the process a pidfd refers to.

    A process started inside a sandbox's PID namespace knows its children by their numbers
    there; the pidfd it passes over carries the identity, and the kernel translates it.
    Raises OSError when the process is not visible here (or the kernel is older than 5.10).
    """
    with open(f"/proc/self/fdinfo/{pidfd}", encoding="ascii") as handle:
        for line in handle:
            key, _, value = line.partition(":")
            if key == "Pid":
                pid = int(value)
                if pid > 0:
                    return pid
                break
    raise OSError(errno.ESRCH, "the sandboxed process is not visible in this PID namespace")


def _proc_group_has_live_member(pgid: int) -> bool:
    """Linux: does any non-zombie process belong to `pgid`? (zombies may never be reaped)."""
    try:
        names = os.listdir("/proc")
    except OSError:
        return True
    for name in names:
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as fh:
                raw = fh.read()
        except OSError:
            continue
        fields = raw[raw.rfind(b")") + 2 :].split()
        if len(fields) > 2 and int(fields[2]) == pgid and fields[0] not in (b"Z", b"X"):
            return True
    return False


def group_alive(pgid: int) -> bool:
    """True while any live process remains in the process group `pgid`."""
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    if sys.platform.startswith("linux"):
        return _proc_group_has_live_member(pgid)
    return True
