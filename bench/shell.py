"""Shell Sessions benchmark (not a test): prints a table with ratios against a bare peer.

    python bench/shell.py [--runs 200] [--mb 500] [--temp DIR]

(a) `exec_command` running `true` to its completed result vs the same command spawned bare
    with `asyncio.create_subprocess_shell` (pipes, communicate). Goal: ≤ 1.3× the bare spawn.
(b) 500 MB of output through one job, polled to completion (recovery file complete), in MB/s,
    with the peak RSS growth of this process. Peer: the same producer read bare and discarded.
    Goals: ≥ 300 MB/s; RSS growth ≤ 64 MB. The recovery file lands in `--temp` (default: the
    OS temp dir), so disk write speed bounds this number; the table also shows the run with
    the file on tmpfs (/dev/shm) when available.
(c) 16 concurrent `exec_command` jobs (`echo`) to completion vs 16 concurrent bare spawns.
(d) `pct serve --sandbox workspace-write` beside a plain `pct serve`, both real processes
    driven over stdio in the same run, calls alternating: the `exec_command true` round trip
    (goal: the sandbox adds ≤ 6 ms) and the calls per second with 8 in flight (goal: ≥ 0.9×
    the unsandboxed rate); then the output throughput of (b) in-process, sandboxed vs not.
    Where Codex's native binary is installed (node_modules/@openai/codex-linux-x64), its own
    `codex sandbox -- true` against a bare `true` spawn, for scale. Skipped (with the reason)
    where the host cannot enforce the sandbox.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

# `python bench/shell.py` puts bench/ first on sys.path, where bench/mcp.py would shadow
# the MCP client package.
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from mcp import Client  # noqa: E402
from mcp.client.stdio import StdioServerParameters  # noqa: E402

from pct_runtime.capabilities.base import CallContext  # noqa: E402
from pct_runtime.capabilities.shell import (  # noqa: E402
    ShellConfig,
    ShellManager,
    create_shell_tools,
)
from pct_runtime.host.system.sandbox import Sandbox, SandboxSettings, unsupported_reason  # noqa: E402
from pct_runtime.output import OutputOwner  # noqa: E402

MB = 1_000_000
# create_subprocess_shell always uses /bin/sh; run ours through the same shell so the
# comparison measures the toolkit, not bash-versus-dash start-up.
SAME_SHELL = ShellConfig("/bin/sh")


def same_shell() -> ShellConfig:
    return SAME_SHELL


def rss() -> int:
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    return 0


async def bare(cmd: str) -> bytes:
    proc = await asyncio.create_subprocess_shell(
        cmd, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE
    )
    out, _ = await proc.communicate()
    return out


async def bench_true(runs: int, temp: str) -> tuple[float, float]:
    owner = OutputOwner(root=temp)
    manager = ShellManager(owner, same_shell)
    exec_tool, _ = create_shell_tools(manager)
    ctx = CallContext(cwd=Path.cwd())
    ours: list[float] = []
    peer: list[float] = []
    for _ in range(10):  # warm up both paths
        await exec_tool({"cmd": "true"}, ctx)
        await bare("true")

    async def run_ours() -> None:
        t = time.perf_counter()
        result = await exec_tool({"cmd": "true"}, ctx)
        ours.append(time.perf_counter() - t)
        assert result.details["status"] == "completed"

    async def run_peer() -> None:
        t = time.perf_counter()
        await bare("true")
        peer.append(time.perf_counter() - t)

    for i in range(runs):  # alternate which goes first, so load drifts hit both alike
        first, second = (run_ours, run_peer) if i % 2 == 0 else (run_peer, run_ours)
        await first()
        await second()
    await manager.close()
    await owner.close()
    return statistics.median(ours), statistics.median(peer)


def producer(nbytes: int) -> str:
    line = "0123456789abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGHIJKLMNOPQRSTUVWXY"
    return f"yes {line} | head -c {nbytes}"


def _stdio_params(root: Path, *args: str) -> StdioServerParameters:
    env = {k: v for k, v in os.environ.items() if k != "PCT_TOKEN"}
    env["PI_CODING_AGENT_DIR"] = str(root / "agent")
    pct = shutil.which("pct", path=str(Path(sys.executable).parent)) or "pct"
    return StdioServerParameters(command=pct, args=["serve", *args], env=env, cwd=root / "work")


async def _call_true(client: Client) -> float:
    t = time.perf_counter()
    result = await client.call_tool("exec_command", {"cmd": "true", "yield_time_ms": 10000})
    elapsed = time.perf_counter() - t
    text = "".join(getattr(block, "text", "") for block in result.content)
    assert "exit_code: 0" in text, text
    return elapsed


async def _rate(client: Client, calls: int, in_flight: int = 8) -> float:
    """`exec_command true` calls completed per second with `in_flight` outstanding."""
    t = time.perf_counter()
    for _ in range(calls // in_flight):
        await asyncio.gather(*(_call_true(client) for _ in range(in_flight)))
    return (calls // in_flight) * in_flight / (time.perf_counter() - t)


async def bench_stdio_sandboxed(runs: int) -> tuple[float, float, float, float]:
    """Median round trip and calls/s: sandboxed `pct serve`, then the plain one."""
    with tempfile.TemporaryDirectory(prefix="pct-bench-") as tmp:
        root = Path(tmp)
        (root / "work").mkdir()
        (root / "agent" / "extensions").mkdir(parents=True)
        (root / "agent" / "extensions" / "pi-codex-toolkit.json").write_text(
            json.dumps({"shellSessions": {"enabled": True}}), encoding="utf-8"
        )
        boxed_params = _stdio_params(root, "--sandbox", "workspace-write")
        async with (
            Client(_stdio_params(root), mode="legacy") as plain,
            Client(boxed_params, mode="legacy") as boxed,
        ):
            pair = [("boxed", boxed), ("plain", plain)]
            for _ in range(10):  # warm up both (the sandbox starts its server on first use)
                for _, client in pair:
                    await _call_true(client)
            times: dict[str, list[float]] = {"plain": [], "boxed": []}
            for i in range(runs):
                for name, client in pair if i % 2 == 0 else reversed(pair):
                    times[name].append(await _call_true(client))
            rates: dict[str, list[float]] = {"plain": [], "boxed": []}
            for i in range(6):
                for name, client in pair if i % 2 == 0 else reversed(pair):
                    rates[name].append(await _rate(client, max(16, runs // 4)))
    return (
        statistics.median(times["boxed"]),
        statistics.median(times["plain"]),
        statistics.median(rates["boxed"]),
        statistics.median(rates["plain"]),
    )


def codex_binary() -> Path | None:
    """Codex's native Linux binary under node_modules, if installed."""
    root = Path(__file__).resolve().parents[1] / "node_modules" / "@openai"
    nested = root / "codex" / "node_modules" / "@openai"
    for base in (root / "codex-linux-x64", nested / "codex-linux-x64"):
        for found in sorted(base.glob("**/codex")):
            if found.is_file() and os.access(found, os.X_OK):
                return found
    return None


def bench_codex_sandbox(codex: Path, runs: int) -> tuple[float, float] | None:
    """Median `codex sandbox -- true` and bare `true` spawn times (None if it fails here)."""
    with tempfile.TemporaryDirectory(prefix="pct-bench-codex-") as home:
        env = {**os.environ, "CODEX_HOME": home}
        argv = [str(codex), "sandbox", "--", "true"]
        quiet = {"stdin": subprocess.DEVNULL, "stdout": subprocess.DEVNULL}
        if subprocess.run(argv, env=env, stderr=subprocess.DEVNULL, **quiet).returncode:
            return None
        times: dict[str, list[float]] = {"codex": [], "bare": []}
        for _ in range(runs):
            t = time.perf_counter()
            subprocess.run(argv, env=env, stderr=subprocess.DEVNULL, check=True, **quiet)
            times["codex"].append(time.perf_counter() - t)
            t = time.perf_counter()
            subprocess.run(["true"], check=True, **quiet)
            times["bare"].append(time.perf_counter() - t)
    return statistics.median(times["codex"]), statistics.median(times["bare"])


async def bench_bulk(
    nbytes: int, temp: str, sandbox: Sandbox | None = None
) -> tuple[float, int, str]:
    owner = OutputOwner(root=temp)
    manager = ShellManager(owner, same_shell, sandbox=sandbox)
    baseline = rss()
    peak = [baseline]
    done = asyncio.Event()

    async def sample() -> None:
        while not done.is_set():
            peak[0] = max(peak[0], rss())
            await asyncio.sleep(0.01)

    sampler = asyncio.create_task(sample())
    t = time.perf_counter()
    result = await manager.start({"cmd": producer(nbytes), "maxOutputBytes": 1024}, cwd=Path.cwd())
    while result.details["status"] == "running":
        result = await manager.write(
            {"session_id": result.details["session_id"], "maxOutputBytes": 1024}
        )
    elapsed = time.perf_counter() - t
    done.set()
    await sampler
    rec = result.details["recovery"]["stdout"]
    assert rec["state"] == "complete", rec
    assert rec["captured_bytes"] == nbytes, rec
    await manager.close()
    await owner.close()
    return nbytes / MB / elapsed, peak[0] - baseline, rec["state"]


async def bench_bulk_bare(nbytes: int) -> float:
    t = time.perf_counter()
    proc = await asyncio.create_subprocess_shell(producer(nbytes), stdout=asyncio.subprocess.PIPE)
    assert proc.stdout is not None
    total = 0
    while chunk := await proc.stdout.read(256 * 1024):
        total += len(chunk)
    await proc.wait()
    assert total == nbytes
    return nbytes / MB / (time.perf_counter() - t)


async def bench_concurrent(temp: str, rounds: int) -> tuple[float, float]:
    owner = OutputOwner(root=temp)
    manager = ShellManager(owner, same_shell)
    ours: list[float] = []
    peer: list[float] = []

    async def run_ours() -> None:
        t = time.perf_counter()
        results = await asyncio.gather(
            *(manager.start({"cmd": f"echo job{i}"}, cwd=Path.cwd()) for i in range(16))
        )
        ours.append(time.perf_counter() - t)
        assert all(r.details["status"] == "completed" for r in results)

    async def run_peer() -> None:
        t = time.perf_counter()
        await asyncio.gather(*(bare(f"echo job{i}") for i in range(16)))
        peer.append(time.perf_counter() - t)

    for i in range(rounds):
        first, second = (run_ours, run_peer) if i % 2 == 0 else (run_peer, run_ours)
        await first()
        await second()
    await manager.close()
    await owner.close()
    return statistics.median(ours), statistics.median(peer)


async def sandbox_rows(
    runs: int, temp: str, nbytes: int, mb: int
) -> list[tuple[str, str, str, str, str]]:
    settings = SandboxSettings("workspace-write")
    reason = unsupported_reason(settings)
    if reason is not None:
        return [("(d) --sandbox workspace-write", "skipped", reason[:60], "", "")]
    boxed, plain, boxed_rate, plain_rate = await bench_stdio_sandboxed(runs)
    rows = [
        (
            "(d) stdio exec_command `true`, workspace-write (median)",
            f"{boxed * 1e3:.2f} ms",
            f"{plain * 1e3:.2f} ms full access",
            f"{(boxed - plain) * 1e3:+.2f} ms",
            "≤ +6 ms",
        ),
        (
            "    stdio calls/s, 8 in flight, workspace-write",
            f"{boxed_rate:.0f}/s",
            f"{plain_rate:.0f}/s full access",
            f"{boxed_rate / plain_rate:.2f}×",
            "≥ 0.90×",
        ),
    ]
    sandbox = Sandbox(settings, Path.cwd())
    plain_mb, _, _ = await bench_bulk(nbytes, temp)
    boxed_mb, _, _ = await bench_bulk(nbytes, temp, sandbox)
    rows.append(
        (
            f"    {mb} MB through one job, workspace-write",
            f"{boxed_mb:.0f} MB/s",
            f"{plain_mb:.0f} MB/s full access",
            f"{boxed_mb / plain_mb:.2f}×",
            "≥ 0.90×",
        )
    )
    codex = codex_binary()
    measured = bench_codex_sandbox(codex, max(20, runs // 5)) if codex is not None else None
    if measured is not None:
        codex_true, bare_true = measured
        rows.append(
            (
                "    Codex `codex sandbox -- true` (median)",
                f"{codex_true * 1e3:.2f} ms",
                f"{bare_true * 1e3:.2f} ms bare `true`",
                f"{(codex_true - bare_true) * 1e3:+.2f} ms",
                "",
            )
        )
    return rows


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=300)
    parser.add_argument("--mb", type=int, default=500)
    parser.add_argument("--temp", default=tempfile.gettempdir())
    args = parser.parse_args()
    nbytes = args.mb * MB

    ours, peer = await bench_true(args.runs, args.temp)
    rows = [
        (
            "(a) exec_command `true` → completed (median)",
            f"{ours * 1e3:.2f} ms",
            f"{peer * 1e3:.2f} ms bare",
            f"{ours / peer:.2f}×",
            "≤ 1.30×",
        ),
    ]
    bare_rate = await bench_bulk_bare(nbytes)
    temps = [args.temp]
    if os.path.isdir("/dev/shm") and args.temp != "/dev/shm":  # noqa: ASYNC240
        temps.append("/dev/shm")
    for temp in temps:
        rate, growth, state = await bench_bulk(nbytes, temp)
        rows.append(
            (
                f"(b) {args.mb} MB through one job, file in {temp}",
                f"{rate:.0f} MB/s",
                f"{bare_rate:.0f} MB/s bare read",
                f"{rate / bare_rate:.2f}×",
                "≥ 300 MB/s",
            )
        )
        rows.append(
            (
                f"    peak RSS growth ({state} recovery file)",
                f"{growth / MB:.1f} MB",
                "",
                "",
                "≤ 64 MB",
            )
        )
    ours16, peer16 = await bench_concurrent(args.temp, max(10, args.runs // 10))
    rows.append(
        (
            "(c) 16 concurrent exec_command `echo` (median)",
            f"{ours16 * 1e3:.1f} ms",
            f"{peer16 * 1e3:.1f} ms bare",
            f"{ours16 / peer16:.2f}×",
            "",
        )
    )
    rows += await sandbox_rows(args.runs, args.temp, nbytes, args.mb)
    widths = [max(len(r[i]) for r in rows) for i in range(5)]
    header = ("benchmark", "pct", "peer", "ratio", "goal")
    widths = [max(w, len(h)) for w, h in zip(widths, header, strict=True)]
    print("  ".join(h.ljust(w) for h, w in zip(header, widths, strict=True)))
    print("  ".join("-" * w for w in widths))
    for row in rows:
        print("  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)))


if __name__ == "__main__":
    asyncio.run(main())
