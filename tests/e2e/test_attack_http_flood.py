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
import subprocess
from pathlib import Path
from typing import IO

import httpx
import pytest
from pct_procs import PCT, child_env, exec_request, low_fd_limit, open_mcp, stop

pytestmark = pytest.mark.e2e

FLOOD = 400


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
        preexec_fn=low_fd_limit,
    )


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
        async with httpx.AsyncClient(timeout=20) as http:
            headers = await open_mcp(http, url, token, "agent")
            first = await http.post(url, json=exec_request("echo before", 2), headers=headers)
            assert "before" in first.text

            for _ in range(FLOOD):
                with contextlib.suppress(OSError, TimeoutError):
                    connect = asyncio.open_connection("127.0.0.1", port)
                    _, writer = await asyncio.wait_for(connect, 5)
                    flood.append(writer)
            during = await http.post(url, json=exec_request("echo during", 3), headers=headers)
            assert "during" in during.text, during.text[-500:]
        assert proc.poll() is None
    finally:
        for writer in flood:
            writer.close()
        stop(proc)
