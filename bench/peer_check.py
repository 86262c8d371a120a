"""Benchmark: what refusing sandboxed peers costs a connection to pct's own ports.

Every connection to the control channel and to the MCP HTTP endpoint is checked once, at
accept, before a byte is read (`pct_runtime.host.peers`: its socket by one sock_diag
query, /proc/net/tcp only without one; the processes holding it, their seccomp filter
count). Rows, each beside the same path with
the check switched off (the peer):

- the check alone, on a live loopback connection of this process;
- a fresh control connection: connect, `ping`, reply (a real `ControlServer`);
- a fresh HTTP connection to uvicorn with pct's protocol class: connect, one request
  answered 401 (no token), close.

The check scans /proc, so its cost grows with the number of this user's processes; the
table prints that count. Goal: a fresh connection within 1.5x of the unchecked one (an MCP
client keeps its HTTP connection, so the check is paid once per client, not per call).

Run: `python bench/peer_check.py [--runs N]`. Prints a table; exits 0.
"""

# ruff: noqa: E402 - the path fix must precede imports
from __future__ import annotations

import sys
from pathlib import Path

# bench/mcp.py is named like the SDK package: keep this directory off the import path.
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]

import argparse
import asyncio
import contextlib
import json
import os
import socket
import statistics
import tempfile
import time
from collections.abc import Awaitable, Callable

import uvicorn
from starlette.responses import PlainTextResponse
from starlette.types import Receive, Scope, Send

from pct_runtime.host import peers
from pct_runtime.jsontypes import JSONMapping
from pct_runtime.serve import control, http_idle
from pct_runtime.serve.control import ControlServer

TOKEN = "bench-token"


def _own_processes() -> int:
    uid = os.getuid()
    count = 0
    for name in os.listdir("/proc"):
        if name.isdigit():
            with contextlib.suppress(OSError):
                count += os.stat(f"/proc/{name}").st_uid == uid
    return count


def _set_check(on: bool) -> None:
    check = peers.sandboxed_peer if on else (lambda _peer, _local: False)
    control.sandboxed_peer = check  # type: ignore[attr-defined]
    http_idle.sandboxed_peer = check  # type: ignore[attr-defined]


async def _median_ms(runs: int, once: Callable[[], Awaitable[None]]) -> float:
    for _ in range(5):
        await once()
    samples = []
    for _ in range(runs):
        start = time.perf_counter()
        await once()
        samples.append((time.perf_counter() - start) * 1000)
    return statistics.median(samples)


async def _control_ping(address: tuple[str, int]) -> None:
    reader, writer = await asyncio.open_connection(*address)
    writer.write(json.dumps({"token": TOKEN, "op": "ping"}).encode() + b"\n")
    line = await reader.readline()
    assert json.loads(line)["ok"] is True, line
    writer.close()
    await writer.wait_closed()


async def _http_401(port: int) -> None:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(b"GET / HTTP/1.1\r\nhost: 127.0.0.1\r\nconnection: close\r\n\r\n")
    head = await reader.read()
    assert head.startswith(b"HTTP/1.1 401"), head[:80]
    writer.close()


async def _app(scope: Scope, receive: Receive, send: Send) -> None:
    if scope["type"] == "http":
        await PlainTextResponse("no token", status_code=401)(scope, receive, send)


async def main(runs: int) -> None:
    with tempfile.TemporaryDirectory(prefix="pct-bench-peer-") as root:

        async def handler(_op: str) -> JSONMapping:
            return {"ok": True}

        server = ControlServer(Path(root), TOKEN, handler, kind="bench", mcp="stdio")
        await server.start()
        host, port_text = server.address.rsplit(":", 1)
        address = (host, int(port_text))

        sock = socket.socket()
        sock.bind(("127.0.0.1", 0))
        sock.listen(128)
        sock.setblocking(False)
        http_port = sock.getsockname()[1]
        config = uvicorn.Config(_app, log_config=None, lifespan="off", http=http_idle.IdleBoundH11)
        web = uvicorn.Server(config)
        web_task = asyncio.create_task(web.serve(sockets=[sock]))
        for _ in range(500):  # uvicorn offers no event for it
            if web.started:
                break
            await asyncio.sleep(0.01)

        client = socket.create_connection(address)
        conn_peer, conn_local = client.getsockname(), address

        async def check_only() -> None:
            peers.sandboxed_address(conn_peer, conn_local)

        async def nothing() -> None:
            return None

        rows = []
        try:
            check = await _median_ms(runs, check_only)
            rows.append(("the check alone", check, await _median_ms(runs, nothing)))
            for label, once in (
                ("control: connect, ping, reply", lambda: _control_ping(address)),
                ("HTTP: connect, one 401 request", lambda: _http_401(http_port)),
            ):
                on: list[float] = []
                off: list[float] = []
                for _ in range(3):  # interleaved rounds: load drifts on a shared machine
                    _set_check(True)
                    on.append(await _median_ms(runs, once))
                    _set_check(False)
                    off.append(await _median_ms(runs, once))
                _set_check(True)
                rows.append((label, statistics.median(on), statistics.median(off)))
        finally:
            client.close()
            web.should_exit = True
            await web_task
            await server.aclose()

    print(f"processes of this user: {_own_processes()}; load {os.getloadavg()[0]:.1f}")
    print(f"{'path':34} {'checked':>10} {'unchecked':>10} {'ratio':>7}")
    for label, on_ms, off_ms in rows:
        ratio = f"{on_ms / off_ms:.2f}x" if off_ms > 0.001 else "-"
        print(f"{label:34} {on_ms:8.3f}ms {off_ms:8.3f}ms {ratio:>7}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=200)
    asyncio.run(main(parser.parse_args().runs))
