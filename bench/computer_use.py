"""Computer Use client benchmark (not a test): prints a table with ratios against a bare peer.

    python bench/computer_use.py [--runs 200] [--screenshot-mb 4]

The app-server is the tests' fake (a real Python process speaking the JSON-lines protocol),
so the numbers measure the client, not macOS. The peer is a bare asyncio driver that writes
the same requests and reads the same replies with no validation, approvals, budgets or
process-group handling.

(a) cold start: spawn + initialize/initialized + thread/start + node_repl poll + first call.
(b) warm `computer_use_list_apps` round trip through the tool (validation included).
(c) `computer_use_get_app_state` with an N MB PNG screenshot (base64 in one JSON line,
    decoded and magic-checked) vs the peer reading and JSON-parsing the same line.
No goal is claimed: a real Sky action takes hundreds of milliseconds, so the client's
sub-millisecond overhead in (b) and the base64 decode in (c) are what this shows.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests" / "capabilities" / "computer_use"))

from cu_helpers import build_tree  # noqa: E402

from pct_runtime.capabilities.base import CallContext  # noqa: E402
from pct_runtime.capabilities.computer_use import (  # noqa: E402
    ComputerUseClient,
    create_computer_use_tools,
)
from pct_runtime.capabilities.computer_use.templates import build_javascript  # noqa: E402


class BarePeer:
    """The minimum a client must do on the wire, nothing else."""

    def __init__(self, codex: Path, env: dict[str, str], home: Path) -> None:
        self.codex, self.env, self.home = codex, env, home
        self.next_id = 1
        self.thread = ""

    async def start(self) -> None:
        self.proc = await asyncio.create_subprocess_exec(
            str(self.codex),
            "app-server",
            cwd=self.home,
            env={**self.env, "CODEX_HOME": str(self.home)},
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            limit=64 * 1024 * 1024,
        )
        await self.request("initialize", {"clientInfo": {"name": "bare", "version": "0"}})
        self.write({"method": "initialized"})
        started = await self.request("thread/start", {"ephemeral": True})
        self.thread = started["thread"]["id"]
        while True:
            status = await self.request("mcpServerStatus/list", {"threadId": self.thread})
            if any(e.get("runtimeStatus") == "connected" for e in status["data"]):
                return
            await asyncio.sleep(0.02)

    def write(self, message: dict[str, Any]) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write((json.dumps(message) + "\n").encode())

    async def request(self, method: str, params: dict[str, Any]) -> Any:
        request_id = self.next_id
        self.next_id += 1
        self.write({"id": request_id, "method": method, "params": params})
        assert self.proc.stdout is not None
        while True:
            reply = json.loads(await self.proc.stdout.readline())
            if reply.get("id") == request_id:
                return reply["result"]

    async def call(self, method: str, args: dict[str, Any]) -> Any:
        params = {
            "threadId": self.thread,
            "server": "node_repl",
            "tool": "js",
            "arguments": {"code": build_javascript(method, args), "title": method},  # type: ignore[arg-type]
        }
        return await self.request("mcpServer/tool/call", params)

    async def close(self) -> None:
        self.proc.terminate()
        await self.proc.wait()


def row(name: str, ours: float, peer: float, unit: str = "ms") -> None:
    print(f"| {name:<44} | {ours:>10.2f} {unit} | {peer:>10.2f} {unit} | {ours / peer:>6.2f}× |")


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=200)
    parser.add_argument("--screenshot-mb", type=float, default=4.0)
    options = parser.parse_args()
    with tempfile.TemporaryDirectory() as temp:
        tree = build_tree(Path(temp))
        size = int(options.screenshot_mb * 1_000_000)
        tree.scenario(screenshot="large", screenshot_bytes=size)
        env = tree.env()
        env.pop("PCT_FAKE_CU_LOG")

        # (a) cold start + first call
        colds_ours, colds_peer = [], []
        for _ in range(5):
            client = ComputerUseClient(tree.runtime, env=env, poll_interval=0.02)
            t0 = time.perf_counter()
            await client.invoke("list_apps", {})
            colds_ours.append(time.perf_counter() - t0)
            await client.close()
            home = Path(tempfile.mkdtemp(dir=temp))
            peer = BarePeer(tree.runtime.codex_path, env, home)
            t0 = time.perf_counter()
            await peer.start()
            await peer.call("list_apps", {})
            colds_peer.append(time.perf_counter() - t0)
            await peer.close()

        # (b) warm round trips through the tool
        client = ComputerUseClient(tree.runtime, env=env, poll_interval=0.02)
        tools = {t.spec.name: t for t in create_computer_use_tools(lambda ctx: client)}
        ctx = CallContext(cwd=Path(temp))
        list_apps = tools["computer_use_list_apps"]
        await list_apps({}, ctx)
        t0 = time.perf_counter()
        for _ in range(options.runs):
            await list_apps({}, ctx)
        ours_warm = (time.perf_counter() - t0) / options.runs
        peer = BarePeer(tree.runtime.codex_path, env, Path(tempfile.mkdtemp(dir=temp)))
        await peer.start()
        t0 = time.perf_counter()
        for _ in range(options.runs):
            await peer.call("list_apps", {})
        peer_warm = (time.perf_counter() - t0) / options.runs

        # (c) large screenshots
        state = tools["computer_use_get_app_state"]
        shots = max(3, options.runs // 20)
        t0 = time.perf_counter()
        for _ in range(shots):
            result = await state({"app": "TextEdit"}, ctx)
            assert len(result.images[0].data) == size
        ours_shot = (time.perf_counter() - t0) / shots
        t0 = time.perf_counter()
        for _ in range(shots):
            await peer.call("get_app_state", {"app": "TextEdit"})
        peer_shot = (time.perf_counter() - t0) / shots
        await client.close()
        await peer.close()

    print(f"Computer Use client vs bare JSON-lines peer (fake app-server, runs={options.runs})")
    print(f"| {'measurement':<44} | {'pct':>13} | {'peer':>13} | {'ratio':>7} |")
    print(f"|{'-' * 46}|{'-' * 15}|{'-' * 15}|{'-' * 9}|")
    row(
        "(a) cold start + first list_apps (median/5)",
        statistics.median(colds_ours) * 1e3,
        statistics.median(colds_peer) * 1e3,
    )
    row("(b) warm list_apps round trip", ours_warm * 1e3, peer_warm * 1e3)
    row(f"(c) get_app_state, {options.screenshot_mb:g} MB PNG", ours_shot * 1e3, peer_shot * 1e3)
    mb = size / 1e6
    print(f"(c) throughput: pct {mb / ours_shot:.0f} MB/s, peer {mb / peer_shot:.0f} MB/s")


if __name__ == "__main__":
    if os.environ.get("PYTHONASYNCIODEBUG"):
        print("note: asyncio debug mode is on; numbers will be slow", file=sys.stderr)
    asyncio.run(main())
