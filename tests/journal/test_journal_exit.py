"""An agent ends its stdio `pct serve` the way Codex does: SIGTERM (or stdin closed), then
SIGKILL ~5 ms later. Every call that answered before that has its journal row."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

from pct_runtime.journal import Journal, JournalQuery
from pct_runtime.journal.store import db_path
from tests.e2e.pct_procs import PCT, child_env, write_config

pytestmark = pytest.mark.e2e

PATCH = "*** Begin Patch\n*** Add File: {name}\n+{text}\n*** End Patch"
KILL_AFTER = 0.005


class RawStdio:
    """A bare JSON-RPC client on a `pct serve` child: no transport of our own to close."""

    def __init__(self, agent: Path, work: Path) -> None:
        self.proc = subprocess.Popen(
            [PCT, "serve"],
            cwd=work,
            env=child_env(agent),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        self._next = 0

    def request(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        self._next += 1
        self._send({"jsonrpc": "2.0", "id": self._next, "method": method, "params": params})
        assert self.proc.stdout is not None
        while True:
            line = self.proc.stdout.readline()
            assert line, "pct serve closed its stdout"
            message = json.loads(line)
            if message.get("id") == self._next and "method" not in message:
                result: dict[str, Any] = message["result"]
                return result

    def _send(self, message: dict[str, Any]) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(message).encode() + b"\n")
        self.proc.stdin.flush()

    def initialize(self) -> None:
        self.request(
            "initialize",
            {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "exit-test", "version": "1"},
            },
        )
        self._send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def call(self, tool: str, args: dict[str, Any]) -> dict[str, Any]:
        return self.request("tools/call", {"name": tool, "arguments": args})

    def kill_group(self) -> None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.proc.pid, signal.SIGKILL)
        self.proc.wait(10)
        for stream in (self.proc.stdin, self.proc.stdout):
            if stream is not None:
                with contextlib.suppress(OSError):
                    stream.close()


@pytest.fixture
def dirs(tmp_path: Path) -> tuple[Path, Path]:
    agent, work = tmp_path / "agent", tmp_path / "work"
    agent.mkdir()
    work.mkdir()
    write_config(
        agent,
        {
            "applyPatch": {"enabled": True},
            "shellSessions": {"enabled": True},
            "codeMode": {"enabled": True, "approvalMode": "always"},
        },
    )
    return agent, work


def _calls(client: RawStdio) -> list[str]:
    """Calls of every kind; the last one answers right before the agent ends the server."""
    tools = []
    for n in range(3):
        assert not client.call("exec_command", {"cmd": f"echo {n}"}).get("isError")
        tools.append("exec_command")
    patch = PATCH.format(name="a.txt", text="a")
    assert not client.call("apply_patch", {"patch": patch}).get("isError")
    tools.append("apply_patch")
    ran = client.call("exec", {"code": "r = await tools.exec_command(cmd='echo in')"})
    assert not ran.get("isError"), ran
    tools += ["exec_command", "exec"]  # the nested call's row, then its cell's
    # Work still running at exit: ending it is cleanup that outlasts the agent's patience.
    running = client.call("exec_command", {"cmd": "trap '' TERM; sleep 30", "yield_time_ms": 50})
    assert running["_meta"]["pct/details"]["session_id"], running
    tools.append("exec_command")
    assert not client.call("exec_command", {"cmd": "echo last"}).get("isError")
    tools.append("exec_command")
    return tools


def _journaled(agent: Path) -> list[str]:
    if not db_path(agent).exists():
        return []
    with Journal.open(agent) as journal:
        return [r.tool for r in reversed(journal.query(JournalQuery(limit=100)))]


@pytest.mark.parametrize("ending", ["sigterm", "stdin-eof"])
def test_rows_of_answered_calls_survive_a_quick_kill(dirs: tuple[Path, Path], ending: str) -> None:
    agent, work = dirs
    client = RawStdio(agent, work)
    try:
        client.initialize()
        tools = _calls(client)
        if ending == "sigterm":
            os.kill(client.proc.pid, signal.SIGTERM)
        else:
            assert client.proc.stdin is not None
            client.proc.stdin.close()
        time.sleep(KILL_AFTER)
    finally:
        client.kill_group()
    assert _journaled(agent) == tools
