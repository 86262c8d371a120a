"""Benchmark: pct's MCP server against a minimal server on the same SDK, side by side.

1. Round-trip latency of a trivial `tools/call` over stdio and over streamable HTTP, with
   the official MCP Python client driving both servers. pct's call is `write_stdin` to an
   unknown shell session (argument normalization, admission, the shell manager's lookup,
   error mapping); the peer's is `echo`. The same calls with a 4 MiB argument time reading
   and parsing one big stdin line (pct's own stdio transport against the SDK's
   `stdio_server`). Goal: pct ≤ 1.2× the peer.
2. `exec_command true` to its completed result over stdio, beside the peer's `run` tool
   spawning `sh -c true` (pipes, read to EOF); pct's `$SHELL` is that `sh` too. Goal: pct
   ≤ 1.3× the peer.
3. Time from spawning the server to its `initialize` response (stdio). Goal: pct ≤ 1.1× the
   peer. Beside it, to its first `tools/list` response (when the model's tools are ready).
4. `--mb` MB (default 200) of output through one job over stdio: `exec_command`, then
   `write_stdin` polls (1 KiB previews, as bench/shell.py; the recovery file keeps all) to the
   completed result, in MB/s, with the RSS growth of the
   `pct serve` process (peak minus before); the peer reads the same producer to EOF. The
   median of `--transfers` runs (default 5) each, pct and the peer taking turns to go first,
   with the range beside it, and the same producer into `cat > /dev/null` (no MCP, no file):
   on a 2-core box the producer's own CPU bounds every reader. Goals: ≥ 500 MB/s; RSS
   growth ≤ 64 MB.
5. What the model reads: the text of the `write_stdin` result that returns one line typed
   into `cat` (Codex's unified exec answers that in ≈ 120 characters). Goal: ≤ 200.

pct and the peer run alternately in one run, so background load hits both alike.
Run: `python bench/mcp.py [--calls N] [--spawns N] [--mb N] [--transfers N]`. Prints a
table; exits 0.
"""

# ruff: noqa: E402, ASYNC220 - the path fix must precede imports; spawns are setup, not timed
from __future__ import annotations

import sys
from pathlib import Path

# This file is named like the SDK package: keep its directory off the import path.
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]

import argparse
import asyncio
import contextlib
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import httpx2
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp.client.streamable_http import streamable_http_client

HERE = Path(__file__).resolve().parent
PCT = shutil.which("pct", path=str(Path(sys.executable).parent)) or "pct"
MINIMAL = [sys.executable, "-P", str(HERE / "mcp_minimal_server.py")]  # -P: see above
INIT = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "bench", "version": "1"},
    },
}


def prepare_agent_dir(root: Path) -> dict[str, str]:
    agent = root / "agent"
    (agent / "extensions").mkdir(parents=True)
    (agent / "extensions" / "pi-codex-toolkit.json").write_text(
        json.dumps({"shellSessions": {"enabled": True}}), encoding="utf-8"
    )
    # Without PYTHONDONTWRITEBYTECODE: an installed pct has its .pyc files; an editable
    # checkout that may not write them compiles every module on every start.
    env = {k: v for k, v in os.environ.items() if k not in ("PCT_TOKEN", "PYTHONDONTWRITEBYTECODE")}
    env["PI_CODING_AGENT_DIR"] = str(agent)
    # pct runs `$SHELL -c CMD`, the peer `sh -c CMD`: the same shell on both sides, so the
    # exec rows compare the servers, not bash's start-up with dash's (2x on Debian).
    env["SHELL"] = shutil.which("sh") or "/bin/sh"
    return env


# ----------------------------------------------------------------------------- start-up
INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}
LIST_TOOLS = {"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {}}


def time_start(argv: list[str], env: dict[str, str], cwd: Path) -> tuple[float, float]:
    """Seconds from spawning the server to its `initialize` response, and to its first
    `tools/list` response (sent, as a client does, right after `initialized`): a server
    that answered `initialize` early but listed its tools late would not start sooner."""
    start = time.perf_counter()
    proc = subprocess.Popen(
        argv,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env=env,
        cwd=cwd,
    )
    assert proc.stdin is not None
    assert proc.stdout is not None
    proc.stdin.write((json.dumps(INIT) + "\n").encode())
    proc.stdin.flush()
    line = proc.stdout.readline()
    initialized = time.perf_counter() - start
    if b'"result"' not in line:
        raise RuntimeError(f"no initialize result from {argv[0]}: {line[:200]!r}")
    proc.stdin.write((json.dumps(INITIALIZED) + "\n" + json.dumps(LIST_TOOLS) + "\n").encode())
    proc.stdin.flush()
    while True:  # notifications may come first
        line = proc.stdout.readline()
        if not line:
            raise RuntimeError(f"no tools/list result from {argv[0]}")
        if json.loads(line).get("id") == 2:
            break
    listed = time.perf_counter() - start
    if b'"tools"' not in line:
        raise RuntimeError(f"no tools/list result from {argv[0]}: {line[:200]!r}")
    proc.stdin.close()
    try:
        proc.wait(10)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
    return initialized, listed


def time_initialize(argv: list[str], env: dict[str, str], cwd: Path) -> float:
    """Seconds from spawning the server to its `initialize` response."""
    return time_start(argv, env, cwd)[0]


# ----------------------------------------------------------------------------- round trips
async def time_calls(client: Client, name: str, args: dict[str, Any], calls: int) -> list[float]:
    for _ in range(max(5, calls // 10)):  # warm-up: lazy imports, model builds, caches
        await client.call_tool(name, args)
    samples = []
    for _ in range(calls):
        start = time.perf_counter()
        await client.call_tool(name, args)
        samples.append(time.perf_counter() - start)
    return samples


@contextlib.asynccontextmanager
async def http_process(argv: list[str], env: dict[str, str], cwd: Path) -> AsyncIterator[str]:
    proc = subprocess.Popen(
        argv,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        env=env,
        cwd=cwd,
        text=True,
        start_new_session=True,
    )
    try:
        assert proc.stderr is not None
        url = ""
        while not url:
            line = await asyncio.to_thread(proc.stderr.readline)
            if not line:
                raise RuntimeError(f"{argv[0]} exited before serving")
            if "serving MCP at " in line:
                url = line.split("serving MCP at ", 1)[1].split()[0]
        yield url
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
        if proc.stderr is not None:
            proc.stderr.close()


PCT_CALL = ("write_stdin", {"session_id": "pct-shell-000000000000", "chars": ""})
PEER_CALL = ("echo", {"text": "x"})
# The same calls with a 4 MiB argument (one 4 MiB stdin line) and a short answer: the
# transport's line reading and parsing dominate.
BIG = "x" * (4 * 1024 * 1024)
PCT_BIG_CALL = ("write_stdin", {"session_id": "pct-shell-000000000000", "chars": BIG})
PEER_BIG_CALL = ("echo", {"text": "x", "pad": BIG})
PCT_TRUE = ("exec_command", {"cmd": "true"})
PEER_TRUE = ("run", {"cmd": "true"})


def result_text(result: Any) -> str:
    return "".join(getattr(block, "text", "") for block in result.content)


def session_of(result: Any) -> str:
    """The session id from the first line, `session_id <id>: <status>`."""
    head = result_text(result).split("\n", 1)[0]
    if not head.startswith("session_id "):
        raise RuntimeError(f"not a shell result: {head!r}")
    return head.split()[1].rstrip(":")


def server_pid() -> int:
    """The newest child of this process: the server the stdio client just spawned."""
    me = str(os.getpid())
    children = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_text()
            except OSError:
                continue
            if stat.rsplit(")", 1)[1].split()[1] == me:
                children.append(int(entry))
    return max(children)


def rss_kib(pid: int, field: str) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    raise RuntimeError(f"no {field} for {pid}")


def producer(mb: int) -> str:
    """The shell command every throughput row reads: `mb` MB of `x`."""
    return f"head -c {mb * 1_000_000} /dev/zero | tr '\\0' x"


async def pct_throughput(env: dict[str, str], cwd: Path, mb: int) -> tuple[float, float]:
    """(MB/s, RSS growth MB) of `mb` MB through one pct job, polled to completion."""
    params = StdioServerParameters(command=PCT, args=["serve"], env=env, cwd=cwd)
    cmd = producer(mb)
    async with Client(params, mode="legacy") as client:
        await client.call_tool(*PCT_TRUE)  # warm: the shell capability's first spawn
        pid = server_pid()
        before = rss_kib(pid, "VmRSS")
        start = time.perf_counter()
        args = {"cmd": cmd, "yield_time_ms": 10000, "maxOutputBytes": 1024}
        result = await client.call_tool("exec_command", args)
        sid = session_of(result)
        while result_text(result).split("\n", 1)[0].endswith(": running"):
            poll = {"session_id": sid, "yield_time_ms": 10000, "maxOutputBytes": 1024}
            result = await client.call_tool("write_stdin", poll)
        elapsed = time.perf_counter() - start
        grown = (rss_kib(pid, "VmHWM") - before) / 1024
    return mb / elapsed, grown


def producer_ceiling(mb: int) -> float:
    """MB/s of the same producer into `cat > /dev/null`: what any reader could get here now."""
    cmd = f"{producer(mb)} | cat > /dev/null"
    start = time.perf_counter()
    subprocess.run(["sh", "-c", cmd], check=True)
    return mb / (time.perf_counter() - start)


async def peer_throughput(env: dict[str, str], cwd: Path, mb: int) -> float:
    params = StdioServerParameters(command=MINIMAL[0], args=MINIMAL[1:], env=env, cwd=cwd)
    cmd = producer(mb)
    async with Client(params, mode="legacy") as client:
        await client.call_tool(*PEER_TRUE)
        start = time.perf_counter()
        result = await client.call_tool("run", {"cmd": cmd})
        elapsed = time.perf_counter() - start
        assert f"bytes: {mb * 1_000_000}" in result_text(result), result_text(result)[:200]
    return mb / elapsed


async def typed_line_text(env: dict[str, str], cwd: Path) -> str:
    """The text of the poll that returns one line typed into `cat`."""
    params = StdioServerParameters(command=PCT, args=["serve"], env=env, cwd=cwd)
    async with Client(params, mode="legacy") as client:
        first = await client.call_tool("exec_command", {"cmd": "cat", "yield_time_ms": 300})
        sid = session_of(first)
        typed = {"session_id": sid, "chars": "hello\n", "yield_time_ms": 2000}
        text = result_text(await client.call_tool("write_stdin", typed))
        await client.call_tool("write_stdin", {"session_id": sid, "terminate": True})
    if "hello" not in text:
        raise RuntimeError(f"cat did not echo the typed line: {text!r}")
    return text


async def stdio_samples(
    argv: list[str], env: dict[str, str], cwd: Path, call: tuple[str, dict[str, Any]], n: int
) -> list[float]:
    params = StdioServerParameters(command=argv[0], args=argv[1:], env=env, cwd=cwd)
    async with Client(params, mode="legacy") as client:
        return await time_calls(client, call[0], call[1], n)


async def http_samples(
    argv: list[str],
    env: dict[str, str],
    cwd: Path,
    call: tuple[str, dict[str, Any]],
    n: int,
    token: Callable[[], str | None],
) -> list[float]:
    async with http_process(argv, env, cwd) as url:
        secret = token()
        headers = {"Authorization": f"Bearer {secret}"} if secret else {}
        http = httpx2.AsyncClient(headers=headers, timeout=30)
        async with Client(streamable_http_client(url, http_client=http), mode="legacy") as client:
            return await time_calls(client, call[0], call[1], n)


def fmt(samples: list[float]) -> str:
    ordered = sorted(samples)
    p90 = ordered[int(0.9 * (len(ordered) - 1))]
    return f"{statistics.median(ordered) * 1000:8.2f} {p90 * 1000:8.2f}"


async def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=200)
    parser.add_argument("--spawns", type=int, default=5)
    parser.add_argument("--mb", type=int, default=200)
    parser.add_argument("--transfers", type=int, default=5, help="throughput runs per server")
    opts = parser.parse_args()
    big_calls = max(10, opts.calls // 10)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        env = prepare_agent_dir(root)
        work = root / "work"
        work.mkdir()
        agent = Path(env["PI_CODING_AGENT_DIR"])

        def pct_token() -> str:
            return (agent / "pct" / "token").read_text().strip()

        rows: list[tuple[str, list[float], list[float]]] = []
        measures: list[
            tuple[str, Callable[[], Awaitable[list[float]]], Callable[[], Awaitable[list[float]]]]
        ] = [
            (
                "tools/call over stdio",
                lambda: stdio_samples([PCT, "serve"], env, work, PCT_CALL, opts.calls),
                lambda: stdio_samples(MINIMAL, env, work, PEER_CALL, opts.calls),
            ),
            (
                "4 MiB tools/call, stdio",
                lambda: stdio_samples([PCT, "serve"], env, work, PCT_BIG_CALL, big_calls),
                lambda: stdio_samples(MINIMAL, env, work, PEER_BIG_CALL, big_calls),
            ),
            (
                "tools/call over HTTP",
                lambda: http_samples(
                    [PCT, "serve", "--http", "127.0.0.1:0"],
                    env,
                    work,
                    PCT_CALL,
                    opts.calls,
                    pct_token,
                ),
                lambda: http_samples(
                    [*MINIMAL, "--http", "0"], env, work, PEER_CALL, opts.calls, lambda: None
                ),
            ),
            (
                "exec_command true (stdio)",
                lambda: stdio_samples([PCT, "serve"], env, work, PCT_TRUE, opts.calls // 2),
                lambda: stdio_samples(MINIMAL, env, work, PEER_TRUE, opts.calls // 2),
            ),
        ]
        for label, ours, peer in measures:
            # alternate the two servers so background load hits both alike
            mine: list[float] = []
            theirs: list[float] = []
            for _ in range(2):
                mine += await ours()
                theirs += await peer()
            rows.append((label, mine, theirs))

        pct_init: list[float] = []
        peer_init: list[float] = []
        pct_list: list[float] = []
        peer_list: list[float] = []
        servers = [([PCT, "serve"], pct_init, pct_list), (MINIMAL, peer_init, peer_list)]
        for spawn in range(opts.spawns):
            # each goes first in every other pair: whatever the previous run left behind
            # (page cache, a busy core) falls on both alike
            for argv, inits, lists in servers if spawn % 2 == 0 else servers[::-1]:
                initialized, listed = time_start(argv, env, work)
                inits.append(initialized)
                lists.append(listed)
        rates: list[tuple[float, float]] = []
        peer_rates: list[float] = []
        ceilings: list[float] = []
        for run in range(opts.transfers):
            ceilings.append(producer_ceiling(opts.mb))
            # alternate who goes first: a slow spell of the box falls on both alike
            if run % 2 == 0:
                rates.append(await pct_throughput(env, work, opts.mb))
                peer_rates.append(await peer_throughput(env, work, opts.mb))
            else:
                peer_rates.append(await peer_throughput(env, work, opts.mb))
                rates.append(await pct_throughput(env, work, opts.mb))
        typed = await typed_line_text(env, work)

    print(
        f"{'measure':28} {'pct med':>8} {'pct p90':>8} {'peer med':>8} {'peer p90':>8} {'ratio':>6}"
    )
    print("-" * 72)
    for label, mine, theirs in rows:
        ratio = statistics.median(mine) / statistics.median(theirs)
        goal = 1.3 if label.startswith("exec_command") else 1.2
        print(f"{label + ' (ms)':28} {fmt(mine)} {fmt(theirs)} {ratio:6.2f}  (goal <= {goal})")
    ratio = statistics.median(pct_init) / statistics.median(peer_init)
    print(
        f"{'spawn -> initialize (ms)':28} {fmt(pct_init)} {fmt(peer_init)} {ratio:6.2f}"
        "  (goal <= 1.1)"
    )
    ratio = statistics.median(pct_list) / statistics.median(peer_list)
    print(f"{'spawn -> tools/list (ms)':28} {fmt(pct_list)} {fmt(peer_list)} {ratio:6.2f}")
    rate = statistics.median(r for r, _ in rates)
    grown = max(g for _, g in rates)
    peer_rate = statistics.median(peer_rates)
    print(
        f"{f'{opts.mb} MB through one job':28} {rate:8.0f} MB/s {peer_rate:8.0f} MB/s "
        f"{rate / peer_rate:6.2f}  (goal >= 500 MB/s; median of {opts.transfers})"
    )
    low, high = min(r for r, _ in rates), max(r for r, _ in rates)
    print(
        f"{'  range':28} {low:4.0f}-{high:<4.0f} MB/s "
        f"{min(peer_rates):4.0f}-{max(peer_rates):<4.0f} MB/s"
    )
    print(
        f"{'  the producer into cat':28} {statistics.median(ceilings):8.0f} MB/s"
        "  (no MCP, no file: the ceiling for any reader on this box now)"
    )
    print(f"{'  pct serve RSS growth':28} {grown:8.1f} MB (max of {opts.transfers}; goal <= 64 MB)")
    print(f"{'typed line into cat (chars)':28} {len(typed):8d} {'~120':>8} (Codex)  (goal <= 200)")
    print("  the model reads: " + typed.replace("\n", "\n  | "))
    print(
        f"\n{opts.calls}x2 calls per server and transport ({big_calls}x2 of 4 MiB); "
        f"{opts.spawns} spawns each; "
        f"load avg {os.getloadavg()[0]:.2f}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
