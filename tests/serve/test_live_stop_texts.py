"""Live control's stop and connection texts: a stop of a job already stopping says so
(not "stopped" twice), the model learns a live console stopped it, and a console's
self-reported `client` is bounded before it enters events."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from pct_runtime.runtime import Runtime
from pct_runtime.serve.client.live_client import EventInfo, LiveClient, Snapshot, Update
from pct_runtime.serve.client.running import control_token
from pct_runtime.serve.live.control import list_runtimes
from pct_runtime.serve.live.hub import MAX_CLIENT_CHARS, bounded_client
from pct_runtime.serve.live.protocol import PROTOCOL_VERSION
from pct_runtime.serve.run import LiveControl


@pytest.fixture
async def live(tmp_path: Path) -> AsyncIterator[tuple[Runtime, LiveControl]]:
    agent = tmp_path / "agent"
    (agent / "extensions").mkdir(parents=True)
    config = {"shellSessions": {"enabled": True}}
    (agent / "extensions" / "pi-codex-toolkit.json").write_text(json.dumps(config), "utf-8")
    runtime = Runtime(agent_dir=agent, cwd=tmp_path)
    await runtime.start()
    control = LiveControl(runtime, "test runtime", kind="pct serve", mcp="stdio")
    await control.start()
    try:
        yield runtime, control
    finally:
        await control.aclose()
        await runtime.aclose()


async def connect(runtime: Runtime) -> LiveClient:
    (entry,) = list_runtimes(runtime.agent_dir)
    return await LiveClient.connect(entry, control_token(runtime.agent_dir), role="console")


async def first(updates: AsyncIterator[Update], check: Any, within: float = 15.0) -> Any:
    async def find() -> Any:
        async for update in updates:
            if check(update):
                return update
        raise AssertionError("the updates ended")

    return await asyncio.wait_for(find(), within)


async def test_a_second_stop_while_the_first_runs_says_it_is_already_stopping(
    live: tuple[Runtime, LiveControl],
) -> None:
    runtime, _ = live
    client = await connect(runtime)
    updates = client.updates()
    session = await runtime.open_session("mcp")
    # SIGTERM is ignored, so the first stop waits for the grace period before SIGKILL.
    cmd = "trap '' TERM; while :; do sleep 0.05; done"
    started = await session.call("exec_command", {"cmd": cmd, "yield_time_ms": 200})
    job_id = started.details["session_id"]
    await first(updates, lambda u: isinstance(u, Snapshot) and bool(u.work))
    first_stop = asyncio.ensure_future(client.stop(job_id))
    await first(
        updates,
        lambda u: isinstance(u, EventInfo) and f"stop shell job {job_id}" in u.text,
    )
    second = await client.stop(job_id)
    assert (second.ok, second.message) == (
        False,
        f"shell job {job_id} is already stopping (a stop was requested earlier)",
    )
    done = await first_stop
    assert (done.ok, done.message) == (True, f"stopped shell job {job_id}")
    third = await client.stop(job_id)
    assert (third.ok, third.message) == (False, f"{job_id} has already ended (terminated)")
    polled = await session.call("write_stdin", {"session_id": job_id})
    assert polled.text.splitlines()[2] == (
        "stopped by the operator from a pct console attached over live control (pct-tui), "
        "not by you; do not rerun this command without asking the user"
    )
    assert polled.details["stopped_by"] == "live_console"
    await client.aclose()


def test_bounded_client_keeps_one_short_line() -> None:
    assert bounded_client("pct-tui 4242") == "pct-tui 4242"
    assert bounded_client("a\nb\tc") == "a b c"
    long = bounded_client("x" * 65_000)
    assert len(long) == MAX_CLIENT_CHARS
    assert long.endswith("…")


async def test_a_huge_client_string_is_cut_in_every_event(
    live: tuple[Runtime, LiveControl],
) -> None:
    runtime, _ = live
    watcher = await connect(runtime)
    updates = watcher.updates()
    await first(updates, lambda u: isinstance(u, Snapshot))
    (entry,) = list_runtimes(runtime.agent_dir)
    host, _, port = entry.control.rpartition(":")
    reader, writer = await asyncio.open_connection(host, int(port))
    request = {
        "token": control_token(runtime.agent_dir),
        "op": "subscribe",
        "version": PROTOCOL_VERSION,
        "role": "monitor",
        "client": "y" * 60_000,
    }
    writer.write(json.dumps(request).encode() + b"\n")
    assert json.loads(await reader.readline())["ok"] is True
    cut = "y" * (MAX_CLIENT_CHARS - 1) + "…"
    joined = await first(updates, lambda u: isinstance(u, EventInfo) and "y" * 10 in u.text)
    assert joined.text == f"monitor connected (client {cut})"
    writer.close()
    left = await first(updates, lambda u: isinstance(u, EventInfo) and "disconnected" in u.text)
    assert left.text == f"monitor disconnected (client {cut})"
    await watcher.aclose()
