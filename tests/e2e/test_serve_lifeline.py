"""Through a real `pct serve`: stdin never blocks a call, and nothing outlives a killed server.

Every process the server starts carries a unique marker in its environment, so survivors are
found in `/proc` however they were started (background, `setsid`, a Code Mode cell's child).
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest
from pct_procs import StdioServer, serving, stop, write_config

from pct_runtime.host.system.procs import process_tag

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.skipif(not sys.platform.startswith("linux"), reason="needs /proc"),
]

MARK = "PCT_LIFELINE_TEST_MARK"


def marked(mark: str) -> list[int]:
    """Live (non-zombie) processes whose environment carries `MARK=mark`."""
    needle = f"{MARK}={mark}".encode()
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/environ", "rb") as fh:
                environ = fh.read()
            with open(f"/proc/{name}/stat", "rb") as fh:
                stat = fh.read()
        except OSError:
            continue
        state = stat[stat.rfind(b")") + 2 :].split()[0]
        if needle in environ.split(b"\0") and state not in (b"Z", b"X"):
            found.append(int(name))
    return found


def kill_marked(mark: str) -> None:
    for pid in marked(mark):
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)


def session_of(text: str) -> str:
    found = re.search(r"session_id (\S+):", text)
    assert found, text
    return found.group(1)


def test_write_stdin_answers_at_its_yield_and_the_job_stays_responsive(tmp_path: Path) -> None:
    agent, work = tmp_path / "agent", tmp_path / "work"
    work.mkdir()
    write_config(agent, {"shellSessions": {"enabled": True}})
    with serving(agent, work) as server:
        # `sleep` never reads stdin: before the fix this call blocked until the job exited.
        first = server.call("exec_command", {"cmd": "sleep 120", "yield_time_ms": 0})
        sid = session_of(first)
        text = server.call(
            "write_stdin", {"session_id": sid, "chars": "x" * 100_000, "yield_time_ms": 1000}
        )
        assert text.startswith(f"session_id {sid}: running")
        pending = re.search(r"stdin: pending \((\d+) of 100000 UTF-8 bytes", text)
        assert pending, text
        assert 0 < int(pending.group(1)) < 100_000
        poll = server.call("write_stdin", {"session_id": sid, "yield_time_ms": 0})
        assert poll.startswith(f"session_id {sid}: running")
        assert "stdin (earlier call): pending" in poll
        too_big = server.call("write_stdin", {"session_id": sid, "chars": "y" * 300_000})
        assert "can never be sent in one call" in too_big
        stopped = server.call("write_stdin", {"session_id": sid, "terminate": True})
        assert stopped.startswith(f"session_id {sid}: terminated")
        assert "stdin (earlier call): delivery unknown" in stopped


def test_sigkill_of_serve_leaves_no_process_and_no_capture_folder(tmp_path: Path) -> None:
    agent, work, run = tmp_path / "agent", tmp_path / "work", tmp_path / "run"
    work.mkdir()
    run.mkdir(mode=0o700)
    temp = run / "pct"  # the capture root under $XDG_RUNTIME_DIR
    write_config(agent, {"shellSessions": {"enabled": True}, "codeMode": {"enabled": True}})
    mark = uuid.uuid4().hex
    (tmp_path / "tmp").mkdir()  # the OS temp dir: the runtime dir must lie outside it
    env = {MARK: mark, "XDG_RUNTIME_DIR": str(run), "TMPDIR": str(tmp_path / "tmp")}
    server = StdioServer(agent, work, **env)
    try:
        server.initialize()
        shell = server.call(
            "exec_command",
            {
                "cmd": "setsid sleep 300 & nohup sleep 300 & echo started; wait",
                "yield_time_ms": 500,
            },
        )
        assert "running" in shell.splitlines()[0], shell
        assert str(temp) in shell  # a running job's recovery path: its capture folder
        cell = server.call(
            "exec",
            {"code": "import random\nrandom._os.system('sleep 300')", "yield_time_ms": 500},
        )
        assert "running" in cell, cell
        # shell, two sleeps, zygote, cell, its shell and sleep (spares add more)
        deadline = time.monotonic() + 10
        while len(marked(mark)) < 7 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert len(marked(mark)) >= 7, marked(mark)
        assert list(temp.glob("pct-output-*"))
        os.kill(server.proc.pid, signal.SIGKILL)
        server.proc.wait(10)
        deadline = time.monotonic() + 15
        while (marked(mark) or list(temp.glob("pct-output-*"))) and time.monotonic() < deadline:
            time.sleep(0.1)
        survivors = marked(mark)
        assert survivors == [], f"processes outlived the server: {survivors}"
        assert list(temp.glob("pct-output-*")) == []
    finally:
        kill_marked(mark)
        stop(server.proc)


def test_start_up_removes_state_of_runtimes_that_are_gone(tmp_path: Path) -> None:
    agent, work, run = tmp_path / "agent", tmp_path / "work", tmp_path / "run"
    work.mkdir()
    run.mkdir(mode=0o700)
    temp = run / "pct"  # the capture root under $XDG_RUNTIME_DIR
    temp.mkdir(mode=0o700)
    write_config(agent, {"shellSessions": {"enabled": True}})
    gone = subprocess.Popen(["true"])
    gone.wait()
    reborn = subprocess.Popen(["sleep", "60"])  # a live process that got a dead runtime's pid
    # A job of a server whose watchdog died with it, and a job of a server that still runs.
    orphan = subprocess.Popen(
        ["sleep", "60"], env={**os.environ, "PCT_LIFELINE": f"{gone.pid}-12345-0123abcd"}
    )
    owned = subprocess.Popen(
        ["sleep", "60"], env={**os.environ, "PCT_LIFELINE": f"{process_tag()}-0123abcd"}
    )
    try:
        registry = agent / "pct" / "runtimes"
        registry.mkdir(parents=True)

        def entry(pid: int, started: float, name: str) -> Path:
            path = registry / f"{pid}-{name}.json"
            record = {"pid": pid, "kind": "pct serve", "control": "127.0.0.1:9", "mcp": "stdio"}
            path.write_text(json.dumps({**record, "started": started}), encoding="utf-8")
            return path

        dead = entry(gone.pid, time.time(), "dead0000")
        reused = entry(reborn.pid, time.time() - 3600, "reused00")
        live = entry(os.getpid(), time.time(), "live0000")  # this test process runs
        stale_dir = temp / f"pct-output-{gone.pid}-12345-abcdefgh"
        stale_dir.mkdir(mode=0o700)
        (stale_dir / f"{uuid.uuid4()}.txt").write_text("old output", encoding="utf-8")
        live_dir = temp / f"pct-output-{process_tag()}-abcdefgh"
        live_dir.mkdir()
        legacy_dir = temp / "pct-output-abcdefgh"  # no process tag: not ours to judge
        legacy_dir.mkdir()
        (tmp_path / "tmp").mkdir()  # the OS temp dir: the runtime dir must lie outside it
        with serving(agent, work, XDG_RUNTIME_DIR=str(run), TMPDIR=str(tmp_path / "tmp")):
            assert not dead.exists()
            assert not reused.exists()
            assert live.exists()
            assert not stale_dir.exists()
            assert live_dir.is_dir()
            assert legacy_dir.is_dir()
            assert orphan.wait(10) == -signal.SIGKILL
            assert owned.poll() is None
    finally:
        for proc in (reborn, orphan, owned):
            proc.kill()
            proc.wait()


def _landlock_abi() -> int:
    from pct_runtime.host.system.sandbox.linux import landlock_abi

    return landlock_abi()


def with_argv(needle: bytes) -> list[int]:
    """Live processes whose argv contains `needle` (for those that scrubbed their env)."""
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            argv = Path(f"/proc/{name}/cmdline").read_bytes().split(b"\0")
            stat = Path(f"/proc/{name}/stat").read_bytes()
        except OSError:
            continue
        if needle in argv and stat[stat.rfind(b")") + 2 :].split()[0] not in (b"Z", b"X"):
            found.append(int(name))
    return found


@pytest.mark.skipif(_landlock_abi() < 3, reason="no Landlock ABI 3: pct refuses --sandbox")
def test_sandboxed_jobs_stop_on_terminate_and_die_with_a_killed_server(tmp_path: Path) -> None:
    """In the sandbox's PID namespace pct signals the job by its own pid for it; a killed
    server takes the whole namespace down, even a process that left the group and scrubbed
    its environment (which the lifeline's marker sweep cannot find)."""
    agent, work, temp = tmp_path / "agent", tmp_path / "work", tmp_path / "tmp"
    work.mkdir()
    temp.mkdir()
    write_config(agent, {"shellSessions": {"enabled": True}, "codeMode": {"enabled": True}})
    mark = uuid.uuid4().hex
    hidden = f"{uuid.uuid4().int % 9000 + 1000}.5".encode()
    sandbox = ("--sandbox", "workspace-write")
    server = StdioServer(agent, work, args=sandbox, **{MARK: mark, "TMPDIR": str(temp)})
    try:
        server.initialize()
        trapped = server.call(
            "exec_command",
            {"cmd": "trap 'echo got-term; exit 7' TERM; sleep 300 & wait", "yield_time_ms": 500},
        )
        sid = session_of(trapped)
        stopped = server.call("write_stdin", {"session_id": sid, "terminate": True})
        assert stopped.startswith(f"session_id {sid}: terminated"), stopped
        assert "got-term" in stopped, stopped
        shell = server.call(
            "exec_command",
            {
                "cmd": f"env -i setsid -f sleep {hidden.decode()}; setsid sleep 300 & wait",
                "yield_time_ms": 500,
            },
        )
        assert "running" in shell.splitlines()[0], shell
        cell = server.call(
            "exec",
            {"code": "import random\nrandom._os.system('sleep 300')", "yield_time_ms": 500},
        )
        assert "running" in cell, cell
        deadline = time.monotonic() + 10
        while not with_argv(hidden) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert with_argv(hidden)
        assert len(marked(mark)) >= 4, marked(mark)  # shell, sleep, zygote, cell (and more)
        os.kill(server.proc.pid, signal.SIGKILL)
        server.proc.wait(10)
        deadline = time.monotonic() + 15
        while (marked(mark) or with_argv(hidden)) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert marked(mark) == [], "processes outlived the server"
        assert with_argv(hidden) == [], "the scrubbed setsid process outlived the server"
    finally:
        kill_marked(mark)
        for pid in with_argv(hidden):
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
        stop(server.proc)
