"""The lifeline watchdog: outlives the server only long enough to take its work down.

Executed as a script (`python -I -S lifeline_watch.py <marker> <server tag> <root fd>`) with
the read end of the server's lifeline pipe as stdin and the capture root's directory descriptor
as `<root fd>` (`-` when there is none); imports only the standard library. See
`pct_runtime.host.system.lifeline` for why it exists. Protocol on stdin: `+<pgid>` / `-<pgid>`
lines (watch / forget a process group). At end of file — the server exited, however it
died — it SIGKILLs every watched group, then every process whose environment carries
`PCT_LIFELINE=<marker>` until a sweep finds none, removes the server's capture folders
(`pct-output-<server tag>-*`: its `<uuid>.txt` files, then the folder) and exits. Like
`pct_runtime.output.sweep.remove_folder`, whose copy it is, every step is relative to a
descriptor, so a folder swapped meanwhile cannot make it delete outside the capture root.
"""

from __future__ import annotations

import contextlib
import os
import re
import signal
import stat
import sys
import time

MARKER_ENV = "PCT_LIFELINE"
SWEEP_ROUNDS = 100
SWEEP_PAUSE = 0.02
DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
RECOVERY_NAME = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\.txt\Z")


def _read_groups() -> set[int]:
    groups: set[int] = set()
    buffer = b""
    while True:
        try:
            chunk = os.read(0, 4096)
        except InterruptedError:
            continue
        except OSError:
            break
        if not chunk:
            break
        buffer += chunk
        *lines, buffer = buffer.split(b"\n")
        for line in lines:
            try:
                pgid = int(line[1:])
            except ValueError:
                continue
            if line.startswith(b"+") and pgid > 1:
                groups.add(pgid)
            elif line.startswith(b"-"):
                groups.discard(pgid)
    return groups


def _marked(needle: bytes) -> list[int]:
    me = os.getpid()
    found: list[int] = []
    try:
        names = os.listdir("/proc")
    except OSError:
        return found
    for name in names:
        if not name.isdigit() or int(name) == me:
            continue
        try:
            with open(f"/proc/{name}/environ", "rb") as fh:
                environ = fh.read()
        except OSError:
            continue
        if needle in environ.split(b"\0"):
            found.append(int(name))
    return found


def _kill_all(groups: set[int], marker: str) -> None:
    for pgid in groups:
        with contextlib.suppress(OSError):
            os.killpg(pgid, signal.SIGKILL)
    needle = f"{MARKER_ENV}={marker}".encode()
    for _ in range(SWEEP_ROUNDS):  # a process may fork while the sweep runs: repeat
        found = _marked(needle)
        if not found:
            return
        for pid in found:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
        time.sleep(SWEEP_PAUSE)


def _remove_folder(root_fd: int, name: str) -> None:
    uid = os.geteuid()
    st = os.stat(name, dir_fd=root_fd, follow_symlinks=False)
    if not stat.S_ISDIR(st.st_mode) or st.st_uid != uid or stat.S_IMODE(st.st_mode) & 0o077:
        return
    fd = os.open(name, DIR_FLAGS, dir_fd=root_fd)
    try:
        held = os.fstat(fd)
        if (held.st_dev, held.st_ino) != (st.st_dev, st.st_ino):
            return
        for entry in os.listdir(fd):
            if not RECOVERY_NAME.match(entry):
                continue
            with contextlib.suppress(FileNotFoundError):
                est = os.stat(entry, dir_fd=fd, follow_symlinks=False)
                if stat.S_ISREG(est.st_mode) and est.st_uid == uid:
                    os.unlink(entry, dir_fd=fd)
        now = os.stat(name, dir_fd=root_fd, follow_symlinks=False)
        if (now.st_dev, now.st_ino) == (held.st_dev, held.st_ino):
            os.rmdir(name, dir_fd=root_fd)
    finally:
        os.close(fd)


def _remove_capture_dirs(server_tag: str, root_fd: int) -> None:
    prefix = f"pct-output-{server_tag}-"
    try:
        names = os.listdir(root_fd)
    except OSError:
        return
    for name in names:
        if name.startswith(prefix):
            with contextlib.suppress(OSError):
                _remove_folder(root_fd, name)


def main(argv: list[str]) -> int:
    if len(argv) != 4:
        sys.stderr.write("usage: lifeline_watch.py <marker> <server-tag> <root-fd>\n")
        return 2
    marker, server_tag = argv[1], argv[2]
    root_fd = int(argv[3]) if argv[3].isdigit() else None
    # Detach from the server: it reaps the short-lived first process at once, and the real
    # watchdog is nobody's zombie when it exits.
    if os.fork() > 0:
        os._exit(0)
    for sig in (signal.SIGINT, signal.SIGHUP, signal.SIGPIPE):
        signal.signal(sig, signal.SIG_IGN)
    groups = _read_groups()
    _kill_all(groups, marker)
    if root_fd is not None:
        _remove_capture_dirs(server_tag, root_fd)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
