"""A flood of idle connections to the control port does not take `pct serve` down.

The control socket is open to every local user, before any token is checked. Each idle
connection used to be held for up to 10 seconds with no bound: a few hundred of them used
up a runtime's file descriptors (1024 is a common limit), and its MCP endpoint stopped
accepting, so the agent's next tool call hung.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import socket
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

import httpx
import pytest
from pct_procs import PCT, child_env, exec_request, low_fd_limit, open_mcp, stop

pytestmark = pytest.mark.e2e

FLOOD = 400


def _spawn(
    agent: Path, work: Path, stderr: object, preexec: Callable[[], None] | None = None
) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [PCT, "serve", "--http", "127.0.0.1:0"],
        cwd=work,
        env=child_env(agent),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=stderr,  # type: ignore[arg-type]
        text=True,
        start_new_session=True,
        preexec_fn=preexec,
    )


async def _exec(url: str, token: str, cmd: str) -> str:
    async with httpx.AsyncClient(timeout=20) as http:
        headers = await open_mcp(http, url, token, "flooded")
        return (await http.post(url, json=exec_request(cmd, 2), headers=headers)).text


async def test_idle_control_connections_leave_mcp_and_shells_working(
    dirs: tuple[Path, Path],
) -> None:
    agent, work = dirs
    proc = _spawn(agent, work, subprocess.PIPE, low_fd_limit)
    writers: list[asyncio.StreamWriter] = []
    try:
        assert proc.stderr is not None
        line = ""
        while "serving MCP at " not in line:
            line = proc.stderr.readline()
            assert line, f"pct serve did not start (exit {proc.wait(10)})"
        url = line.split("serving MCP at ", 1)[1].split()[0]
        (entry,) = (agent / "pct" / "runtimes").glob("*.json")
        host, _, port = json.loads(entry.read_text())["control"].rpartition(":")
        token = (agent / "pct" / "token").read_text().strip()
        readers = []
        for _ in range(FLOOD):
            reader, writer = await asyncio.wait_for(asyncio.open_connection(host, int(port)), 5)
            readers.append(reader)
            writers.append(writer)
        # The ones past the bound are told why and closed.
        last = await asyncio.wait_for(readers[-1].read(), 10)
        assert json.loads(last)["error"].startswith("busy: too many control connections")

        text = await _exec(url, token, "echo flood-held")
        assert "flood-held" in text
        assert proc.poll() is None
    finally:
        for writer in writers:
            writer.close()
        with contextlib.suppress(ProcessLookupError):
            stop(proc)


def test_open_control_connections_at_shutdown_leave_no_tracebacks(
    dirs: tuple[Path, Path], tmp_path: Path
) -> None:
    """Each connection still open at SIGTERM used to print a CancelledError traceback (about
    1.5 KB) to stderr, which an agent logs; with enough of them an unread stderr pipe
    filled and the shutdown blocked."""
    agent, work = dirs
    errors = tmp_path / "stderr.txt"
    with errors.open("w") as sink:
        proc = _spawn(agent, work, sink)
    sockets: list[socket.socket] = []
    try:
        deadline = time.monotonic() + 30
        while "serving MCP at " not in errors.read_text():
            assert proc.poll() is None, errors.read_text()
            assert time.monotonic() < deadline, errors.read_text()
            time.sleep(0.05)
        (entry,) = (agent / "pct" / "runtimes").glob("*.json")
        host, _, port = json.loads(entry.read_text())["control"].rpartition(":")
        for _ in range(5):
            sockets.append(socket.create_connection((host, int(port)), timeout=5))
        time.sleep(0.5)  # accepted and waiting for their request lines
        os.killpg(proc.pid, signal.SIGTERM)
        assert proc.wait(20) == 0
        assert "Traceback" not in errors.read_text(), errors.read_text()[-2000:]
    finally:
        for sock in sockets:
            sock.close()
        stop(proc)
