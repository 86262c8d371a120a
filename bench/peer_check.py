"""Benchmark: what refusing sandboxed peers costs a connection to pct's own ports.

Every connection to the control channel and to the MCP HTTP endpoint is checked once, at
accept, before a byte is read (`pct_runtime.host.system.peers`: its socket by one sock_diag
query, /proc/net/tcp only without one; the processes holding it, their seccomp filter
count). Rows, each beside the same path with
the check switched off (the peer):

- the check alone, on a live loopback connection of this process;
- a fresh control connection: connect, `ping`, reply (a real `ControlServer`);
- a fresh HTTP connection to uvicorn with pct's protocol class: connect, one request
  answered 401 (no token), close.

The check reads /proc, so its cost grows with the number of this user's processes; the
table prints that count. Then the same two first rows again with a helper process of this
user holding `--fds` descriptors (50,000 by default: `os.dup` of one, its limit raised as
far as the hard limit allows): the search for the socket's holder must not read them.
Goal: a fresh connection within 1.5x of the unchecked one (an MCP client keeps its HTTP
connection, so the check is paid once per client, not per call), and the rows beside the
helper within 1.5x of the rows without it.

Run: `python bench/peer_check.py [--runs N] [--fds N]`. Prints a table; exits 0.
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

from pct_runtime.host.system import peers
from pct_runtime.jsontypes import JSONMapping
from pct_runtime.serve.live import control
from pct_runtime.serve.live.control import ControlServer
from pct_runtime.serve.mcp import http_idle

TOKEN = "bench-token"


def _own_processes() -> int:
    uid = os.getuid()
    count = 0
    for name in os.listdir("/proc"):
        if name.isdigit():
            with contextlib.suppress(OSError):
                count += os.stat(f"/proc/{name}").st_uid == uid
    return count


#: Holds many descriptors (dups of stdin) until its stdin closes.
_HOLDER = """
import os, resource, sys
want = int(sys.argv[1])
soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
try:  # a privileged user may raise the hard limit too
    resource.setrlimit(resource.RLIMIT_NOFILE, (want + 64, max(hard, want + 64)))
    limit = want + 64
except (OSError, ValueError):
    limit = want + 64 if hard == resource.RLIM_INFINITY else min(hard, want + 64)
    resource.setrlimit(resource.RLIMIT_NOFILE, (limit, hard))
held = [os.dup(0) for _ in range(min(want, limit - 64))]
print(len(held), flush=True)
sys.stdin.read()
"""


def _set_check(on: bool) -> None:
    check = peers.sandboxed_peer if on else (lambda _peer, _local: False)
    quick = peers.quick_sandboxed_peer if on else (lambda _peer, _local: False)
    for module in (control, http_idle):
        module.sandboxed_peer = check  # type: ignore[attr-defined]
        module.quick_sandboxed_peer = quick  # type: ignore[attr-defined]


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


async def _rows(
    runs: int, address: tuple[str, int], conn_peer: tuple[str, int]
) -> list[tuple[str, float, float]]:
    """The check alone and a control ping, checked and unchecked (interleaved rounds)."""

    async def check_only() -> None:
        peers.sandboxed_address(conn_peer, address)

    async def nothing() -> None:
        return None

    check = await _median_ms(runs, check_only)
    rows = [("the check alone", check, await _median_ms(runs, nothing))]
    on: list[float] = []
    off: list[float] = []
    for _ in range(3):  # interleaved rounds: load drifts on a shared machine
        _set_check(True)
        on.append(await _median_ms(runs, lambda: _control_ping(address)))
        _set_check(False)
        off.append(await _median_ms(runs, lambda: _control_ping(address)))
    _set_check(True)
    rows.append(("control: connect, ping, reply", statistics.median(on), statistics.median(off)))
    return rows


async def main(runs: int, fds: int) -> None:
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
        conn_peer = client.getsockname()

        rows = []
        held = 0
        try:
            rows += await _rows(runs, address, conn_peer)
            on: list[float] = []
            off: list[float] = []
            for _ in range(3):
                _set_check(True)
                on.append(await _median_ms(runs, lambda: _http_401(http_port)))
                _set_check(False)
                off.append(await _median_ms(runs, lambda: _http_401(http_port)))
            _set_check(True)
            label = "HTTP: connect, one 401 request"
            rows.append((label, statistics.median(on), statistics.median(off)))
            holder = await asyncio.create_subprocess_exec(
                sys.executable,
                "-c",
                _HOLDER,
                str(fds),
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
            )
            assert holder.stdout is not None
            assert holder.stdin is not None
            held = int(await holder.stdout.readline())
            try:
                for label, on_ms, off_ms in await _rows(runs, address, conn_peer):
                    rows.append((f"{label}, beside {held:,} fds", on_ms, off_ms))
            finally:
                holder.stdin.close()
                await holder.wait()
        finally:
            client.close()
            web.should_exit = True
            await web_task
            await server.aclose()

    print(f"processes of this user: {_own_processes()}; load {os.getloadavg()[0]:.1f}")
    print(f"{'path':52} {'checked':>10} {'unchecked':>10} {'ratio':>7}")
    for label, on_ms, off_ms in rows:
        ratio = f"{on_ms / off_ms:.2f}x" if off_ms > 0.001 else "-"
        print(f"{label:52} {on_ms:8.3f}ms {off_ms:8.3f}ms {ratio:>7}")
    alone = {label: on_ms for label, on_ms, _ in rows}
    for label in ("the check alone", "control: connect, ping, reply"):
        beside = alone[f"{label}, beside {held:,} fds"]
        print(f"{label}: beside {held:,} fds / without: {beside / alone[label]:.2f}x")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=200)
    parser.add_argument("--fds", type=int, default=50_000)
    args = parser.parse_args()
    asyncio.run(main(args.runs, args.fds))
