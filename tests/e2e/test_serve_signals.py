"""`pct serve` ended by a signal still ends its sessions: shell jobs die, the entry goes."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import time
from pathlib import Path

import pytest
from pct_procs import PCT, child_env, stop, write_config

pytestmark = pytest.mark.e2e


def rpc(proc: subprocess.Popen[str], message: dict[str, object]) -> dict[str, object]:
    assert proc.stdin is not None
    assert proc.stdout is not None
    proc.stdin.write(json.dumps(message) + "\n")
    proc.stdin.flush()
    if "id" not in message:
        return {}
    while True:
        reply: dict[str, object] = json.loads(proc.stdout.readline())
        if reply.get("id") == message["id"]:
            return reply


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGHUP])
def test_signal_cleans_up_shell_jobs_and_registry(tmp_path: Path, sig: signal.Signals) -> None:
    agent, work = tmp_path / "agent", tmp_path / "work"
    work.mkdir()
    write_config(agent, {"shellSessions": {"enabled": True}})
    proc = subprocess.Popen(
        [PCT, "serve"],
        cwd=work,
        env=child_env(agent),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        start_new_session=True,
    )
    sleeper = 0
    try:
        init = {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "t", "version": "1"},
        }
        rpc(proc, {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": init})
        rpc(proc, {"jsonrpc": "2.0", "method": "notifications/initialized"})
        reply = rpc(
            proc,
            {
                "jsonrpc": "2.0",
                "id": 2,
                "method": "tools/call",
                "params": {
                    "name": "exec_command",
                    "arguments": {"cmd": "sleep 300 & echo pid=$!; wait", "yield_time_ms": 500},
                },
            },
        )
        text = json.dumps(reply)
        found = re.search(r"pid=(\d+)", text)
        assert found, text
        sleeper = int(found.group(1))
        assert alive(sleeper)
        assert list((agent / "pct" / "runtimes").glob("*.json"))
        proc.send_signal(sig)
        assert proc.wait(20) == 0
        deadline = time.monotonic() + 10
        while alive(sleeper) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not alive(sleeper)
        assert list((agent / "pct" / "runtimes").glob("*.json")) == []
    finally:
        if sleeper and alive(sleeper):
            os.kill(sleeper, signal.SIGKILL)
        stop(proc)


def test_http_server_on_sigterm_cleans_up(tmp_path: Path) -> None:
    import asyncio

    import httpx2
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client
    from pct_procs import http_server

    agent, work = tmp_path / "agent", tmp_path / "work"
    work.mkdir()
    write_config(agent, {"shellSessions": {"enabled": True}})
    sleeper = 0
    with http_server(agent, work) as (url, proc):
        token = (agent / "pct" / "token").read_text().strip()

        async def start_job() -> str:
            http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=30)
            async with Client(
                streamable_http_client(url, http_client=http, terminate_on_close=False),
                mode="legacy",
            ) as client:
                result = await client.call_tool(
                    "exec_command", {"cmd": "sleep 300 & echo pid=$!; wait", "yield_time_ms": 500}
                )
                return json.dumps(result.model_dump(mode="json"))

        text = asyncio.run(start_job())
        found = re.search(r"pid=(\d+)", text)
        assert found, text
        sleeper = int(found.group(1))
        assert alive(sleeper)
        try:
            proc.send_signal(signal.SIGTERM)
            proc.wait(20)
            deadline = time.monotonic() + 10
            while alive(sleeper) and time.monotonic() < deadline:
                time.sleep(0.05)
            assert not alive(sleeper)
            assert list((agent / "pct" / "runtimes").glob("*.json")) == []
        finally:
            if alive(sleeper):
                os.kill(sleeper, signal.SIGKILL)
