"""A read-only agent dir: `pct serve` starts with the journal and live control off, says so
once, and its tools work; `pct log` and `pct undo` say why the journal is off.

Root writes through permissions, so as root the agent dir is made read-only by a bind mount
in a mount namespace of the child's own (`unshare -m`); otherwise by mode 0555.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.e2e.pct_procs import PCT, child_env, stop, write_config

pytestmark = pytest.mark.e2e

_REMOUNT = 'mount --bind "$0" "$0" && mount -o remount,bind,ro "$0" && exec "$@"'


def _prefix(agent: Path) -> list[str]:
    """What runs a command with `agent` read-only (skips when this machine cannot)."""
    if os.geteuid() != 0:
        return []
    unshare = shutil.which("unshare")
    if unshare is None:
        pytest.skip("root without unshare: cannot make the agent dir read-only")
    prefix = [unshare, "-m", "sh", "-c", _REMOUNT, str(agent)]
    probe = subprocess.run(
        [*prefix, "sh", "-c", f"! touch {agent}/probe 2>/dev/null"], check=False, timeout=30
    )
    if probe.returncode != 0:
        pytest.skip("cannot remount the agent dir read-only here (no mount namespace)")
    return prefix


@pytest.fixture
def read_only(tmp_path: Path) -> Iterator[tuple[Path, Path, list[str]]]:
    agent, work = tmp_path / "agent", tmp_path / "work"
    work.mkdir()
    write_config(agent, {"applyPatch": {"enabled": True}, "shellSessions": {"enabled": True}})
    (agent / "pct").mkdir(mode=0o700)
    prefix = _prefix(agent)
    if not prefix:
        (agent / "pct").chmod(0o555)
    yield agent, work, prefix
    (agent / "pct").chmod(0o700)


def _rpc(request_id: int, method: str, params: dict[str, object]) -> str:
    return json.dumps({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params})


def test_serve_on_a_read_only_agent_dir_warns_once_and_serves(
    read_only: tuple[Path, Path, list[str]],
) -> None:
    agent, work, prefix = read_only
    patch = "*** Begin Patch\n*** Add File: made.txt\n+made\n*** End Patch"
    lines = [
        _rpc(1, "initialize", {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "ro-test", "version": "1"},
        }),
        json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        _rpc(2, "tools/call", {"name": "exec_command", "arguments": {"cmd": "echo served"}}),
        _rpc(3, "tools/call", {"name": "apply_patch", "arguments": {"patch": patch}}),
    ]  # fmt: skip
    proc = subprocess.Popen(
        [*prefix, PCT, "serve"],
        cwd=work,
        env=child_env(agent),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        assert proc.stdin is not None
        assert proc.stdout is not None
        proc.stdin.write(lines[0] + "\n" + lines[1] + "\n" + lines[2] + "\n")
        proc.stdin.flush()
        replies = {}
        while len(replies) < 2:
            line = proc.stdout.readline()
            assert line, "pct serve ended early"
            reply = json.loads(line)
            replies[reply.get("id")] = reply
            if reply.get("id") == 2:
                proc.stdin.write(lines[3] + "\n")
                proc.stdin.flush()
        while 3 not in replies:
            line = proc.stdout.readline()
            assert line, "pct serve ended early"
            reply = json.loads(line)
            replies[reply.get("id")] = reply
        proc.stdin.close()
        assert proc.wait(30) == 0
        assert proc.stderr is not None
        stderr = proc.stderr.read()
    finally:
        stop(proc)
    exec_result = replies[2]["result"]
    assert not exec_result["isError"]
    assert "served" in exec_result["content"][0]["text"]
    assert not replies[3]["result"]["isError"]
    assert (work / "made.txt").read_text() == "made\n"
    state = agent / "pct"
    why = "is on a read-only file system" if prefix else "is not writable by this user"
    assert stderr == (
        f"pct: warning: the call journal and the live-control registry are off: {state} "
        f"{why}. Tools work; calls are not recorded (pct log, pct undo) and pct reload / "
        "pct status --live do not see this server.\n"
    )
    assert list(state.iterdir()) == []  # nothing written: no journal, key or registry entry


def test_log_and_undo_say_the_journal_is_off_on_a_read_only_agent_dir(
    read_only: tuple[Path, Path, list[str]],
) -> None:
    agent, _work, prefix = read_only
    state = agent / "pct"
    why = "is on a read-only file system" if prefix else "is not writable by this user"
    env = child_env(agent)
    log = subprocess.run(
        [*prefix, PCT, "log"], env=env, capture_output=True, text=True, check=False, timeout=60
    )
    assert log.returncode == 0
    assert log.stderr == f"pct: the journal is off: {state} {why}; nothing was recorded\n"
    undo = subprocess.run(
        [*prefix, PCT, "undo"], env=env, capture_output=True, text=True, check=False, timeout=60
    )
    assert undo.returncode == 1
    assert undo.stderr == f"pct: nothing undone: the journal is off: {state} {why}\n"


def test_http_serve_on_a_read_only_agent_dir_needs_pct_token(
    read_only: tuple[Path, Path, list[str]],
) -> None:
    agent, work, prefix = read_only
    done = subprocess.run(
        [*prefix, PCT, "serve", "--http", "127.0.0.1:0"],
        cwd=work,
        env=child_env(agent),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )
    assert done.returncode == 1
    why = "Read-only file system" if prefix else "Permission denied"
    assert done.stderr == (
        f"pct: cannot serve: the bearer token cannot be made in {agent / 'pct'} ({why}); "
        "set PCT_TOKEN, or make that folder writable\n"
    )
