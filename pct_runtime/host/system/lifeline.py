"""Shell jobs and Code Mode workers die with the server, however the server dies.

A `kill -9` of `pct serve` runs no cleanup code, so the guarantee has to come from
processes and kernel features that outlive the server. Three layers, Linux-first:

1. **A lifeline watchdog.** One tiny stdlib-only process per server (`lifeline_watch.py`,
   started lazily with the first job or worker, in its own session, with an empty
   environment) holds the read end of a pipe whose write end only the server holds
   (`O_CLOEXEC`, so no child inherits it). The kernel closes that end whatever kills the
   server, so the watchdog reads end of file, SIGKILLs every process group the server told
   it about (`+pgid`/`-pgid` lines), then every process whose environment carries this
   server's `PCT_LIFELINE=<pid>-<start ticks>-<random>` marker — which also catches
   grandchildren that left the group with `setsid`/`nohup` but kept the environment —
   repeating until a sweep finds none; then it removes the server's capture folders,
   through a descriptor of the capture root it inherited (it never resolves a path).

2. **Parent-death signal on the Code Mode zygote and its cells.** `child_setup()` runs in
   the child between fork and exec and sets `PR_SET_PDEATHSIG = SIGKILL` (then exits if the
   parent already died in between); the zygote arms it again for each cell. The kernel
   sends it when the *thread* that forked exits, so the zygote is started from the asyncio
   loop thread, which lives as long as the runtime. Shell jobs do not get it: a
   `preexec_fn` makes Python fork instead of vfork on every `exec_command`, which measured
   3.76 ms instead of 1.29 ms for `true` (bench/shell.py); the watchdog covers them.

3. **The next start-up.** If the watchdog itself was killed, the next runtime that starts
   (`pct_runtime.serve.live.dead_runtimes`) kills processes whose marker names a server
   that no longer runs (pid and start time, so a reused pid does not count), and removes
   that server's capture folders and runtime registry entry.

Why not a child subreaper (`PR_SET_CHILD_SUBREAPER`): it only adopts orphans while the
server lives — when the server dies they move on to the next subreaper or PID 1 all the
same — and the adopted zombies would pile up, since the loop's child watcher waits only
for the pids it started. Why not a supervisor per job: one process per server is cheaper
and sees every job, cell and descendant at once.

Out of reach, as the spec says of escaped groups: a process that both leaves the group and
scrubs its environment (`env -i setsid …`).
"""

from __future__ import annotations

import contextlib
import logging
import os
import secrets
import select
import signal
import subprocess
import sys
from collections.abc import Callable, Mapping
from pathlib import Path

from pct_runtime.host.system.procs import process_tag, same_process_alive
from pct_runtime.output.root import process_capture_root

_log = logging.getLogger(__name__)

MARKER_ENV = "PCT_LIFELINE"
WATCH_SCRIPT = Path(__file__).with_name("lifeline_watch.py")
_PR_SET_PDEATHSIG = 1


def _load_prctl() -> Callable[..., int] | None:
    if not sys.platform.startswith("linux"):
        return None
    try:
        import ctypes  # deferred: Linux only, loaded on first use

        libc = ctypes.CDLL(None, use_errno=True)
        prctl: Callable[..., int] = libc.prctl
        return prctl
    except (OSError, AttributeError):
        return None


_PRCTL = _load_prctl()  # resolved in the parent: the child only calls it


def child_setup(then: Callable[[], None] | None = None) -> Callable[[], None] | None:
    """A `preexec_fn` that makes the child die with this process (then runs `then`).

    Returns `then` unchanged where there is no `prctl` (not Linux).
    """
    prctl = _PRCTL
    if prctl is None:
        return then
    parent = os.getpid()

    def setup() -> None:
        prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        if os.getppid() != parent:  # the parent died before the signal was armed
            os._exit(1)
        if then is not None:
            then()

    return setup


class Lifeline:
    """This process's link to its watchdog. Use the process-wide `lifeline()`."""

    def __init__(self) -> None:
        self._owner = os.getpid()
        self.marker = f"{process_tag()}-{secrets.token_hex(8)}"
        self._fd: int | None = None
        self._groups: set[int] = set()

    @property
    def running(self) -> bool:
        return self._fd is not None

    def ensure(self) -> bool:
        """Start the watchdog once (again if it died). False when it cannot run."""
        if self._fd is not None and not _reader_gone(self._fd):
            return True
        if self._fd is not None:  # the watchdog was killed: start another
            with contextlib.suppress(OSError):
                os.close(self._fd)
            self._fd = None
        if not sys.platform.startswith("linux"):
            return False  # the watchdog finds processes through /proc
        try:
            root_fd: int | None = process_capture_root().fd
        except OSError:
            root_fd = None  # no capture root: there will be no folders to remove either
        read_end, write_end = os.pipe()  # both O_CLOEXEC: no child inherits the write end
        try:
            launcher = subprocess.Popen(
                [
                    sys.executable,
                    "-I",
                    "-S",
                    str(WATCH_SCRIPT),
                    self.marker,
                    process_tag(),
                    "-" if root_fd is None else str(root_fd),
                ],
                pass_fds=() if root_fd is None else (root_fd,),
                stdin=read_end,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                env={},  # carries no marker of ours or of the caller's
                cwd="/",
                start_new_session=True,
            )
            launcher.wait()  # the launcher forks the watchdog and exits at once
        except (OSError, subprocess.SubprocessError) as exc:
            os.close(write_end)
            _log.warning("lifeline watchdog could not start: %s", exc)
            return False
        finally:
            os.close(read_end)
        os.set_blocking(write_end, False)
        self._fd = write_end
        for pgid in self._groups:
            self._send(f"+{pgid}\n")
        return self._fd is not None

    def child_env(self, env: Mapping[str, str]) -> dict[str, str]:
        """`env` plus this server's marker, so the watchdog can find the child's descendants."""
        return {**env, MARKER_ENV: self.marker}

    def watch(self, pgid: int) -> None:
        """Kill process group `pgid` if this process dies before `forget(pgid)`."""
        self._groups.add(pgid)
        self._send(f"+{pgid}\n")

    def forget(self, pgid: int) -> None:
        if pgid in self._groups:
            self._groups.discard(pgid)
            self._send(f"-{pgid}\n")

    def _send(self, line: str) -> None:
        fd = self._fd
        if fd is None:
            return
        try:
            os.write(fd, line.encode("ascii"))
        except BlockingIOError:
            pass  # a stalled watchdog still finds the group's members by their marker
        except OSError:
            self._fd = None  # the watchdog is gone: the next `ensure()` starts another
            with contextlib.suppress(OSError):
                os.close(fd)


def _reader_gone(fd: int) -> bool:
    """A pipe's write end reports POLLERR once no process holds the read end."""
    poller = select.poll()
    poller.register(fd, 0)
    return any(events & (select.POLLERR | select.POLLHUP) for _, events in poller.poll(0))


_lifeline: Lifeline | None = None


def lifeline() -> Lifeline:
    """The lifeline of this process (a forked copy of the server gets its own)."""
    global _lifeline
    if _lifeline is None or _lifeline._owner != os.getpid():
        _lifeline = Lifeline()
    return _lifeline


def protect_child(env: Mapping[str, str]) -> dict[str, str]:
    """Start the watchdog if needed and return the environment for a new child."""
    line = lifeline()
    line.ensure()
    return line.child_env(env)


def _marker_owner_alive(marker: str) -> bool:
    parts = marker.split("-")
    if len(parts) != 3 or not (parts[0].isdigit() and parts[1].isdigit()):
        return True  # not a marker this version wrote: leave the process alone
    return same_process_alive(int(parts[0]), int(parts[1]))


def kill_orphans() -> list[int]:
    """SIGKILL processes whose lifeline marker names a server that no longer runs.

    The start-up half of the guarantee, for when a server's watchdog died with it. Only
    processes of this user that carry a marker are considered. Returns the pids signalled.
    """
    if not sys.platform.startswith("linux"):
        return []
    prefix = f"{MARKER_ENV}=".encode()
    me = os.getpid()
    killed: list[int] = []
    verdicts: dict[str, bool] = {}
    for name in os.listdir("/proc"):
        if not name.isdigit() or int(name) == me:
            continue
        try:
            with open(f"/proc/{name}/environ", "rb") as fh:
                environ = fh.read()
        except OSError:
            continue
        for item in environ.split(b"\0"):
            if item.startswith(prefix):
                marker = item[len(prefix) :].decode("ascii", "replace")
                if marker not in verdicts:
                    verdicts[marker] = _marker_owner_alive(marker)
                if not verdicts[marker]:
                    with contextlib.suppress(OSError):
                        os.kill(int(name), signal.SIGKILL)
                        killed.append(int(name))
                break
    return killed
