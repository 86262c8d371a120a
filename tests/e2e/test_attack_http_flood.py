"""Idle connections to the MCP HTTP endpoint do not take `pct serve --http` down.

Any local user can connect before a token is checked, and uvicorn waited for a first
request forever: a few hundred silent sockets used up the runtime's file descriptors, so
the attached agent's next command could not start (no pipes left) and new connections
were not accepted. Silent connections are now bounded and closed after the keep-alive
time; an agent's open connection keeps working through the flood.
"""

from __future__ import annotations

import asyncio
import contextlib
import resource
import subprocess
from pathlib import Path
from typing import IO

import httpx
import pytest
from pct_procs import PCT, child_env, stop

pytestmark = pytest.mark.e2e

FD_LIMIT = 256
FLOOD = 400
HEADERS = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}


def _low_fd_limit() -> None:
    _, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (FD_LIMIT, hard))


def _spawn(agent: Path, work: Path, stderr: IO[str]) -> subprocess.Popen[str]:
    # stderr to a file: the flood makes asyncio log every refused accept, and an unread
    # pipe would block the server on its own log.
    return subprocess.Popen(
        [PCT, "serve", "--http", "127.0.0.1:0"],
        cwd=work,
        env=child_env(agent),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=stderr,
        text=True,
        start_new_session=True,
        preexec_fn=_low_fd_limit,
    )


def _call(cmd: str, request_id: int) -> dict[str, object]:
    args = {"cmd": cmd, "yield_time_ms": 5000}
    params = {"name": "exec_command", "arguments": args}
    return {"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": params}


async def test_an_attached_agent_keeps_working_through_a_flood(
    dirs: tuple[Path, Path], tmp_path: Path
) -> None:
    agent, work = dirs
    log = tmp_path / "stderr.txt"
    with log.open("w") as sink:
        proc = _spawn(agent, work, sink)
    flood: list[asyncio.StreamWriter] = []
    try:
        for _ in range(300):
            if "serving MCP at " in log.read_text() or proc.poll() is not None:
                break
            await asyncio.sleep(0.1)
        text = log.read_text()
        assert "serving MCP at " in text, text
        url = text.split("serving MCP at ", 1)[1].split()[0]
        port = int(url.rsplit(":", 1)[1].split("/")[0])
        token = (agent / "pct" / "token").read_text().strip()
        auth = {**HEADERS, "Authorization": f"Bearer {token}"}
        init = {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "agent", "version": "1"},
            },
        }
        async with httpx.AsyncClient(timeout=20) as http:
            opened = await http.post(url, json=init, headers=auth)
            headers = {**auth, "Mcp-Session-Id": opened.headers["mcp-session-id"]}
            note = {"jsonrpc": "2.0", "method": "notifications/initialized"}
            await http.post(url, json=note, headers=headers)
            first = await http.post(url, json=_call("echo before", 2), headers=headers)
            assert "before" in first.text

            for _ in range(FLOOD):
                with contextlib.suppress(OSError, TimeoutError):
                    connect = asyncio.open_connection("127.0.0.1", port)
                    _, writer = await asyncio.wait_for(connect, 5)
                    flood.append(writer)
            during = await http.post(url, json=_call("echo during", 3), headers=headers)
            assert "during" in during.text, during.text[-500:]
        assert proc.poll() is None
    finally:
        for writer in flood:
            writer.close()
        stop(proc)
