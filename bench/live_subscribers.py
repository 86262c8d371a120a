"""Benchmark: do many live subscribers slow the agent's calls?

An agent (the official MCP Python client) drives a stdio `pct serve` and times
`exec_command true` round trips. Three settings on the same runtime, interleaved in rounds:

- no subscriber connected (the peer);
- N console subscribers connected over the control socket, reading every line and
  following nothing;
- N console subscribers that follow every job they see running in a snapshot.

The subscribers live in one child process (raw sockets with the control token, the
project's wire protocol, no parsing beyond what following needs), so the runtime serves N
real connections. A job of `true` is often over before a snapshot shows it running; a
background job (`sleep`, started before the rounds) is running throughout, so in the
following row every subscriber follows at least that one.

Goal: both subscriber rows within 1.2x of the no-subscriber row.

Run: `python bench/live_subscribers.py [--subscribers N] [--calls N] [--rounds N]`.
Prints a table; exits 0.
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
import resource
import shutil
import statistics
import tempfile
import time
from collections.abc import AsyncIterator

from mcp import Client
from mcp.client.stdio import StdioServerParameters

from pct_runtime.serve.client.running import control_token
from pct_runtime.serve.live.control import list_runtimes

PCT = shutil.which("pct", path=str(Path(sys.executable).parent)) or "pct"


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
        result = await client.call_tool("exec_command", {"cmd": "true"})
        samples.append(time.perf_counter() - start)
        assert not result.is_error
    return samples


#: The last snapshot line parsed and its running work ids: every subscriber gets the same
#: bytes, and the child's CPU is the machine's too (it is not the runtime's cost measured).
_parsed: tuple[bytes, list[str]] = (b"", [])


def running_work(line: bytes) -> list[str]:
    global _parsed
    if line != _parsed[0]:
        work = json.loads(line)["work"]
        _parsed = (line, [w["id"] for w in work if w["state"] == "running"])
    return _parsed[1]


async def subscriber(host: str, port: int, token: str, follow: bool, ready: asyncio.Event) -> None:
    reader, writer = await asyncio.open_connection(host, port, limit=1 << 24)
    request = {"token": token, "op": "subscribe", "version": 1, "role": "console"}
    writer.write(json.dumps(request).encode() + b"\n")
    accept = json.loads(await reader.readline())
    assert accept.get("ok") is True, accept
    followed: set[str] = set()
    ids = 0
    while line := await reader.readline():
        ready.set()
        if follow and line.startswith(b'{"type":"snapshot"'):
            for work_id in running_work(line):
                if work_id not in followed:
                    followed.add(work_id)
                    ids += 1
                    message = {"type": "follow", "id": ids, "work_id": work_id}
                    writer.write(json.dumps(message).encode() + b"\n")


async def subscribers_child(agent: Path, count: int, follow: bool) -> None:
    """N subscribers in this process, until killed."""
    (entry,) = list_runtimes(agent)
    host, _, port = entry.control.rpartition(":")
    token = control_token(agent)
    readies = [asyncio.Event() for _ in range(count)]
    tasks = []
    for ready in readies:  # one at a time: the runtime admits 64 waiting connections
        tasks.append(asyncio.ensure_future(subscriber(host, int(port), token, follow, ready)))
        await ready.wait()
    print("ready", flush=True)
    await asyncio.gather(*tasks)


@contextlib.asynccontextmanager
async def subscribers(agent: Path, count: int, follow: bool) -> AsyncIterator[None]:
    argv = [sys.executable, __file__, "--child", str(agent), "--subscribers", str(count)]
    if follow:
        argv.append("--follow")
    child = await asyncio.create_subprocess_exec(*argv, stdout=asyncio.subprocess.PIPE)
    assert child.stdout is not None
    assert (await child.stdout.readline()).strip() == b"ready"
    await asyncio.sleep(0.5)  # the connect burst's snapshots and events settle
    try:
        yield
    finally:
        child.kill()
        await child.wait()
        await asyncio.sleep(0.5)  # the runtime notices the disconnects


def fmt(samples: list[float]) -> str:
    ordered = sorted(samples)
    p90 = ordered[int(len(ordered) * 0.9) - 1] if len(ordered) >= 10 else ordered[-1]
    return f"{statistics.median(ordered) * 1000:8.2f} {p90 * 1000:8.2f}"


async def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--subscribers", type=int, default=200)
    parser.add_argument("--calls", type=int, default=40, help="calls per round and setting")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--child", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--follow", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    want = min(hard, max(soft, 4 * args.subscribers + 256))
    resource.setrlimit(resource.RLIMIT_NOFILE, (want, hard))  # pct serve inherits it
    if args.child is not None:
        await subscribers_child(args.child, args.subscribers, args.follow)
        return 0
    n = args.subscribers
    with tempfile.TemporaryDirectory() as tmp:
        agent, env = prepare(Path(tmp))
        params = StdioServerParameters(command=PCT, args=["serve"], env=env, cwd=tmp)
        samples: dict[str, list[float]] = {"none": [], "idle": [], "follow": []}
        async with Client(params, mode="legacy") as client:
            await time_calls(client, 5)  # warm-up
            background = await client.call_tool(
                "exec_command",
                {"cmd": "while :; do sleep 0.2; echo tick; done", "yield_time_ms": 250},
            )
            job = background.meta["pct/details"]["session_id"]  # type: ignore[index]
            for _ in range(args.rounds):
                samples["none"] += await time_calls(client, args.calls)
                async with subscribers(agent, n, follow=False):
                    samples["idle"] += await time_calls(client, args.calls)
                async with subscribers(agent, n, follow=True):
                    samples["follow"] += await time_calls(client, args.calls)
            await client.call_tool("write_stdin", {"session_id": job, "terminate": True})
    base = statistics.median(samples["none"])
    print(f"exec_command true over stdio, {args.rounds} x {args.calls} calls per row")
    print(f"{'subscribers':34} {'med ms':>8} {'p90 ms':>8} {'ratio':>6}")
    print("-" * 60)
    labels = {
        "none": "none (peer)",
        "idle": f"{n} connected, following nothing",
        "follow": f"{n} connected, following each job",
    }
    for key, label in labels.items():
        ratio = statistics.median(samples[key]) / base
        goal = "" if key == "none" else "  (goal <= 1.20)"
        print(f"{label:34} {fmt(samples[key])} {ratio:6.2f}{goal}")
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
