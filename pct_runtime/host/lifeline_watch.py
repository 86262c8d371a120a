"""The lifeline watchdog: outlives the server only long enough to take its work down.

Executed as a script (`python -I -S lifeline_watch.py <marker> <server tag> <temp dir>`) with
the read end of the server's lifeline pipe as stdin; imports only the standard library. See
`pct_runtime.host.lifeline` for why it exists. Protocol on stdin: `+<pgid>` / `-<pgid>`
lines (watch / forget a process group). At end of file — the server exited, however it
died — it SIGKILLs every watched group, then every process whose environment carries
`PCT_LIFELINE=<marker>` until a sweep finds none, removes the server's capture folders
(`pct-output-<server tag>-*`: its `*.txt` files, then the folder) and exits.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import time

MARKER_ENV = "PCT_LIFELINE"
SWEEP_ROUNDS = 100
SWEEP_PAUSE = 0.02


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


def _remove_capture_dirs(server_tag: str, temp_dir: str) -> None:
    prefix = f"pct-output-{server_tag}-"
    try:
        names = os.listdir(temp_dir)
    except OSError:
        return
    uid = os.getuid()
    for name in names:
        if not name.startswith(prefix):
            continue
        path = os.path.join(temp_dir, name)
        try:
            st = os.lstat(path)
            if not os.path.isdir(path) or os.path.islink(path) or st.st_uid != uid:
                continue
            for entry in os.listdir(path):
                if entry.endswith(".txt"):
                    os.unlink(os.path.join(path, entry))
            os.rmdir(path)
        except OSError:
            continue


def main(argv: list[str]) -> int:
    if len(argv) != 4:
        sys.stderr.write("usage: lifeline_watch.py <marker> <server-tag> <temp-dir>\n")
        return 2
    marker, server_tag, temp_dir = argv[1], argv[2], argv[3]
    # Detach from the server: it reaps the short-lived first process at once, and the real
    # watchdog is nobody's zombie when it exits.
    if os.fork() > 0:
        os._exit(0)
    for sig in (signal.SIGINT, signal.SIGHUP, signal.SIGPIPE):
        signal.signal(sig, signal.SIG_IGN)
    groups = _read_groups()
    _kill_all(groups, marker)
    _remove_capture_dirs(server_tag, temp_dir)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
