"""Benchmark: the console's output viewer fed from another runtime vs. from its own.

    python bench/console_remote.py [--mb 100] [--presses 60]

A shell job writes `--mb` MB of 100-byte lines as fast as it can while the console's
output viewer is open on it, twice:

- remote: the job runs in an agent's stdio `pct serve` (a real subprocess driven by the
  official MCP client); the console (in-process, headless) follows it over live control;
- peer: the same job in the console's own embedded runtime (the viewer without live control).

Measured: seconds from the job's first byte to the viewer holding every character, the
viewer's character count against the job's captured count (nothing may be dropped), and
key-press-to-render latency while the stream runs (goal ≤ 50 ms median and p95, as for
the embedded viewer in bench/console.py). Prints a table with remote/peer ratios.
"""

# ruff: noqa: E402 - the path fix must precede imports
from __future__ import annotations

import sys
from pathlib import Path

# bench/mcp.py is named like the SDK package: keep this directory off the import path.
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import argparse
import asyncio
import json
import os
import shlex
import shutil
import tempfile
import time
from collections.abc import Awaitable, Callable

from mcp import Client
from mcp.client.stdio import StdioServerParameters
from textual import events
from textual.pilot import Pilot
from textual.widgets import DataTable, Static

from pct_tui.app import PctApp
from pct_tui.screens.output import OutputScreen
from pct_tui.widgets.output_log import OutputLog

MB = 1_000_000
PCT = str(Path(sys.executable).with_name("pct"))


def producer(total: int) -> str:
    """A command writing `total` bytes of 100-byte lines in 1 MB writes, after 1 s (so the
    viewer is open before the first byte)."""
    script = (
        "import sys, time\n"
        "chunk = ('x' * 99 + '\\n') * 10000\n"
        "time.sleep(1)\n"
        f"for _ in range({total} // len(chunk)):\n"
        "    sys.stdout.write(chunk); sys.stdout.flush()\n"
    )
    return f"{sys.executable} -c {shlex.quote(script)}"


class Probe:
    """Times `f` (the viewer's Follow key) to the frame after it: the title changes."""

    def __init__(self) -> None:
        self.rendered: list[float] = []
        self.original = OutputScreen.action_follow
        probe = self

        def timed(screen: OutputScreen) -> None:
            probe.original(screen)
            screen.query_one("#output-title", Static).update(f"key {len(probe.rendered) + 1}")
            screen.call_after_refresh(lambda: probe.rendered.append(time.perf_counter()))

        OutputScreen.action_follow = timed  # type: ignore[method-assign]

    def restore(self) -> None:
        OutputScreen.action_follow = self.original  # type: ignore[method-assign]

    async def measure(self, pilot: Pilot[None], log: OutputLog, total: int, n: int) -> list[float]:
        samples: list[float] = []
        for _ in range(n):
            if log.written >= total:
                break
            before = len(self.rendered)
            sent = time.perf_counter()
            # As the terminal driver delivers a key (Pilot.press would also wait for idle,
            # which a streaming viewer never is).
            pilot.app.post_message(events.Key("f", "f"))
            while len(self.rendered) == before:  # noqa: ASYNC110 - polling is the probe
                await asyncio.sleep(0.0005)
            samples.append((self.rendered[-1] - sent) * 1000)
            await asyncio.sleep(0.02)
        return samples


async def open_viewer(app: PctApp, pilot: Pilot[None], key_suffix: str) -> OutputLog:
    await pilot.press("4")
    table = app.screen.query_one("#work-table", DataTable)
    while True:
        keys = [str(k.value) for k in table.rows]
        match = [i for i, k in enumerate(keys) if k.endswith(key_suffix)]
        if match:
            break
        await pilot.pause(0.01)
    table.move_cursor(row=match[0])
    await pilot.press("enter")
    while not isinstance(app.screen, OutputScreen):
        await pilot.pause(0.01)
    return app.screen.query_one(OutputLog)


async def drain(
    log: OutputLog, total: int, probe: Probe, pilot: Pilot[None], presses: int
) -> tuple[float, list[float]]:
    while log.received == 0:  # noqa: ASYNC110 - the stream has begun
        await asyncio.sleep(0.001)
    first = time.perf_counter()
    latency = await probe.measure(pilot, log, total, presses)
    while log.written < total:  # noqa: ASYNC110
        await asyncio.sleep(0.005)
    return time.perf_counter() - first, latency


def fresh_agent(root: Path) -> Path:
    agent = root / "agent"
    (agent / "extensions").mkdir(parents=True)
    (agent / "extensions" / "pi-codex-toolkit.json").write_text(
        json.dumps({"shellSessions": {"enabled": True}}) + "\n"
    )
    return agent


async def run_remote(mb: int, presses: int, probe: Probe) -> tuple[float, list[float], int]:
    root = Path(tempfile.mkdtemp(prefix="pct-bench-remote-"))
    total = mb * MB
    try:
        agent = fresh_agent(root)
        env = {k: v for k, v in os.environ.items() if k != "PCT_TOKEN"}
        env["PI_CODING_AGENT_DIR"] = str(agent)
        server = StdioServerParameters(command=PCT, args=["serve"], env=env, cwd=root)
        async with Client(server, mode="legacy") as client:
            app = PctApp(agent_dir=agent, serve=False, watch=False, cwd=root)
            async with app.run_test(size=(120, 40)) as pilot:
                while not any(r.snapshot for r in app.remotes.all()):
                    await pilot.pause(0.01)
                ran = await client.call_tool(
                    "exec_command", {"cmd": producer(total), "yield_time_ms": 250}
                )
                assert ran.meta is not None
                job = ran.meta["pct/details"]["session_id"]
                log = await open_viewer(app, pilot, f"|shell:{job}")
                seconds, latency = await drain(log, total, probe, pilot, presses)
                written = log.written
                await app.shutdown()
        return seconds, latency, written
    finally:
        shutil.rmtree(root, ignore_errors=True)


async def run_embedded(mb: int, presses: int, probe: Probe) -> tuple[float, list[float], int]:
    root = Path(tempfile.mkdtemp(prefix="pct-bench-embedded-"))
    total = mb * MB
    try:
        agent = fresh_agent(root)
        app = PctApp(agent_dir=agent, serve=False, watch=False, cwd=root, discover=False)
        async with app.run_test(size=(120, 40)) as pilot:
            while not app.console_state.ready:
                await pilot.pause(0.01)
            session = await app.runtime.open_session("mcp", session_id="bench")
            ran = await session.call("exec_command", {"cmd": producer(total), "yield_time_ms": 250})
            job = str(ran.details["session_id"])
            log = await open_viewer(app, pilot, f"shell:{job}")
            seconds, latency = await drain(log, total, probe, pilot, presses)
            written = log.written
            await app.shutdown()
        return seconds, latency, written
    finally:
        shutil.rmtree(root, ignore_errors=True)


def q(values: list[float], at: float) -> float:
    if not values:  # the stream ended before the first key: use a larger --mb
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(at * len(ordered)))]


async def main_async(mb: int, presses: int) -> None:
    os.environ["TEXTUAL_ANIMATIONS"] = "none"
    probe = Probe()
    try:
        runs: dict[str, Callable[[int, int, Probe], Awaitable[tuple[float, list[float], int]]]]
        runs = {"remote": run_remote, "peer": run_embedded}
        results = {name: await run(mb, presses, probe) for name, run in runs.items()}
    finally:
        probe.restore()
    remote, peer = results["remote"], results["peer"]
    total = mb * MB
    print(f"{'measure':<56} {'remote':>9} {'peer':>9} {'ratio':>7} {'goal':>9}")
    print("-" * 94)
    print(
        f"{f'first byte → viewer holds all {mb} MB (s)':<56} "
        f"{remote[0]:>9.2f} {peer[0]:>9.2f} {remote[0] / peer[0]:>7.2f} {'':>9}"
    )
    for label, at in (("median", 0.5), ("p95", 0.95)):
        r, p = q(remote[1], at), q(peer[1], at)
        print(
            f"{f'key → render while streaming, {label} (ms)':<56} "
            f"{r:>9.1f} {p:>9.1f} {r / p:>7.2f} {'≤ 50 ms':>9}"
        )
    print(
        f"{'key samples while streaming':<56} {len(remote[1]):>9} {len(peer[1]):>9}\n"
        f"characters in the viewer: remote {remote[2]}, peer {peer[2]}, written {total} "
        f"({'nothing dropped' if remote[2] == peer[2] == total else 'MISMATCH'})"
    )
    print(
        "remote: a job in an agent's stdio `pct serve`, followed over live control; "
        "peer: the same job in the console's embedded runtime."
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--mb", type=int, default=100)
    parser.add_argument("--presses", type=int, default=60)
    args = parser.parse_args()
    asyncio.run(main_async(args.mb, args.presses))
    return 0


if __name__ == "__main__":
    sys.exit(main())
