"""Benchmark: does a live console slow the agent's tools?

An agent (the official MCP Python client) drives a stdio `pct serve` and times
`exec_command` round trips (`echo` of a 4 KiB line, so every call also makes output and
events for the console). Three runs on the same runtime, interleaved in rounds:

- no console connected (the peer);
- a console connected through `LiveClient` (its own process, as pct-tui), reading its
  updates and following every job;
- a stuck console: subscribed with a tiny receive buffer, following a job with megabytes
  of output, and never reading.

Goal: both console rows within 1.2× of the no-console row.

Run: `python bench/live.py [--calls N] [--rounds N]`. Prints a table; exits 0.
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
import shutil
import socket
import statistics
import sys
import tempfile
import time
from collections.abc import AsyncIterator
from pathlib import Path

from mcp import Client
from mcp.client.stdio import StdioServerParameters

from pct_runtime.serve.client.live_client import LiveClient, Snapshot
from pct_runtime.serve.client.running import control_token
from pct_runtime.serve.live.control import list_runtimes

PCT = shutil.which("pct", path=str(Path(sys.executable).parent)) or "pct"
LINE = "x" * 4096


def prepare(root: Path) -> tuple[Path, dict[str, str]]:
    agent = root / "agent"
    (agent / "extensions").mkdir(parents=True)
    (agent / "extensions" / "pi-codex-toolkit.json").write_text(
        json.dumps({"shellSessions": {"enabled": True}}), encoding="utf-8"
    )
    env = {k: v for k, v in os.environ.items() if k != "PCT_TOKEN"}
    env["PI_CODING_AGENT_DIR"] = str(agent)
    return agent, env


async def time_calls(client: Client, calls: int) -> list[float]:
    samples: list[float] = []
    for _ in range(calls):
        start = time.perf_counter()
        result = await client.call_tool("exec_command", {"cmd": f"echo {LINE}"})
        samples.append(time.perf_counter() - start)
        assert not result.is_error
    return samples


async def console_child(agent: Path) -> None:
    """The reading console, in its own process (as pct-tui would be): reads everything and
    follows every job it sees, until killed."""
    (entry,) = list_runtimes(agent)
    live = await LiveClient.connect(entry, control_token(agent), role="console")
    followed: set[str] = set()
    tasks: set[asyncio.Task[None]] = set()

    async def drain(work_id: str) -> None:
        with contextlib.suppress(Exception):
            async for _ in live.follow(work_id):
                pass

    print("ready", flush=True)
    async for update in live.updates():
        if isinstance(update, Snapshot):
            for work in update.work:
                if work.id not in followed and work.state == "running":
                    followed.add(work.id)
                    tasks.add(asyncio.ensure_future(drain(work.id)))


@contextlib.asynccontextmanager
async def reading_console(agent: Path) -> AsyncIterator[None]:
    child = await asyncio.create_subprocess_exec(
        sys.executable, __file__, "--console-child", str(agent), stdout=asyncio.subprocess.PIPE
    )
    assert child.stdout is not None
    assert (await child.stdout.readline()).strip() == b"ready"
    try:
        yield
    finally:
        child.kill()
        await child.wait()


@contextlib.asynccontextmanager
async def stuck_console(agent: Path, client: Client) -> AsyncIterator[None]:
    """Subscribed, following a job with lots of output, and never reading."""
    started = await client.call_tool(
        "exec_command",
        {"cmd": "head -c 8000000 /dev/zero | tr '\\0' x; sleep 600", "yield_time_ms": 200},
    )
    job = started.meta["pct/details"]["session_id"]  # type: ignore[index]
    (entry,) = list_runtimes(agent)
    host, _, port = entry.control.rpartition(":")
    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    sock.connect((host, int(port)))
    sock.sendall(
        json.dumps(
            {"token": control_token(agent), "op": "subscribe", "version": 1, "role": "console"}
        ).encode()
        + b"\n"
        + json.dumps({"type": "follow", "id": 1, "work_id": job}).encode()
        + b"\n"
    )
    await asyncio.sleep(1.0)  # let its socket fill up
    try:
        yield
    finally:
        sock.close()
        await client.call_tool("write_stdin", {"session_id": job, "terminate": True})


def fmt(samples: list[float]) -> str:
    ordered = sorted(samples)
    p90 = ordered[int(len(ordered) * 0.9) - 1] if len(ordered) >= 10 else ordered[-1]
    return f"{statistics.median(ordered) * 1000:8.2f} {p90 * 1000:8.2f}"


async def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=40, help="calls per round and setting")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--console-child", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.console_child is not None:
        await console_child(args.console_child)
        return 0
    with tempfile.TemporaryDirectory() as tmp:
        agent, env = prepare(Path(tmp))
        params = StdioServerParameters(command=PCT, args=["serve"], env=env, cwd=tmp)
        samples: dict[str, list[float]] = {"none": [], "reading": [], "stuck": []}
        async with Client(params, mode="legacy") as client:
            await time_calls(client, 5)  # warm-up
            for _ in range(args.rounds):
                samples["none"] += await time_calls(client, args.calls)
                async with reading_console(agent):
                    samples["reading"] += await time_calls(client, args.calls)
                async with stuck_console(agent, client):
                    samples["stuck"] += await time_calls(client, args.calls)
    base = statistics.median(samples["none"])
    print(f"exec_command round trip over stdio, {args.rounds} x {args.calls} calls per row")
    print(f"{'console':28} {'med ms':>8} {'p90 ms':>8} {'ratio':>6}")
    print("-" * 54)
    labels = {
        "none": "none (peer)",
        "reading": "connected, following",
        "stuck": "stuck (never reads)",
    }
    for key, label in labels.items():
        ratio = statistics.median(samples[key]) / base
        goal = "" if key == "none" else "  (goal <= 1.20)"
        print(f"{label:28} {fmt(samples[key])} {ratio:6.2f}{goal}")
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
