"""The lifeline watchdog and process identity, against real processes (Linux)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
import uuid
from pathlib import Path

import pytest

from pct_runtime.host.system import lifeline as lifeline_mod
from pct_runtime.host.system.procs import alive_since, process_tag, same_process_alive, start_ticks

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="needs /proc")


def _live(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            stat = fh.read()
    except OSError:
        return False
    return stat[stat.rfind(b")") + 2 :].split()[0] not in (b"Z", b"X")


def _watchdogs(marker: str) -> list[int]:
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/cmdline", "rb") as fh:
                argv = fh.read().split(b"\0")
        except OSError:
            continue
        if marker.encode() in argv and _live(int(name)):
            found.append(int(name))
    return found


def _wait(predicate: object, timeout: float = 10.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():  # type: ignore[operator]
            return True
        time.sleep(0.02)
    return False


def test_process_identity_tells_a_reused_pid_apart() -> None:
    me = os.getpid()
    ticks = start_ticks(me)
    assert ticks is not None
    assert process_tag() == f"{me}-{ticks}"
    assert same_process_alive(me, ticks)
    assert not same_process_alive(me, ticks + 1)  # same pid, another start: not the owner
    assert alive_since(me, time.time())
    assert not alive_since(me, time.time() - 10 * 365 * 86400)  # started after the record
    gone = subprocess.Popen(["true"])
    gone.wait()
    assert not same_process_alive(gone.pid, 0)


def test_a_killed_watchdog_is_replaced_on_the_next_spawn() -> None:
    line = lifeline_mod.Lifeline()
    try:
        assert line.ensure()
        assert _wait(lambda: len(_watchdogs(line.marker)) == 1)
        (first,) = _watchdogs(line.marker)
        os.kill(first, signal.SIGKILL)
        assert _wait(lambda: not _live(first))
        assert line.ensure()
        assert _wait(lambda: len(_watchdogs(line.marker)) == 1)
        assert _watchdogs(line.marker) != [first]
    finally:
        if line._fd is not None:
            os.close(line._fd)  # end of file: the watchdog exits
    assert _wait(lambda: not _watchdogs(line.marker))


def test_watchdog_kills_group_and_marked_escapees_when_its_server_dies(tmp_path: Path) -> None:
    # A stand-in server: starts a job group and a `setsid` escapee, then is SIGKILLed.
    pidfile = tmp_path / "pids"
    script = textwrap.dedent(
        f"""
        import os, subprocess, time
        from pct_runtime.host.system.lifeline import lifeline, protect_child
        env = protect_child(os.environ)
        job = subprocess.Popen(
            ["/bin/sh", "-c", "sleep 300 & setsid sleep 300 & echo $! > {pidfile}.x; wait"],
            env=env, start_new_session=True,
        )
        lifeline().watch(job.pid)
        time.sleep(0.5)
        open({str(pidfile)!r}, "w").write(str(job.pid))
        time.sleep(300)
        """
    )
    mark = uuid.uuid4().hex
    env = {**os.environ, "PCT_TEST_LIFELINE_MARK": mark}
    server = subprocess.Popen([sys.executable, "-c", script], env=env)
    try:
        assert _wait(lambda: pidfile.exists() and pidfile.read_text().strip())
        leader = int(pidfile.read_text())
        escapee = int(Path(f"{pidfile}.x").read_text())
        assert _live(leader)
        assert _live(escapee)
        assert os.getsid(escapee) != os.getsid(leader)  # it left the job's session and group
        server.kill()
        server.wait()
        assert _wait(lambda: not _live(leader) and not _live(escapee))
    finally:
        server.kill()
        server.wait()
        for pid in lifeline_test_marked(mark):
            os.kill(pid, signal.SIGKILL)


def lifeline_test_marked(mark: str) -> list[int]:
    needle = f"PCT_TEST_LIFELINE_MARK={mark}".encode()
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit() or int(name) == os.getpid():
            continue
        try:
            with open(f"/proc/{name}/environ", "rb") as fh:
                if needle in fh.read().split(b"\0") and _live(int(name)):
                    found.append(int(name))
        except OSError:
            continue
    return found
