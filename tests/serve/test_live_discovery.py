"""Discovery wakes on the registry directory: a runtime that registers is reported at once,
not at the next scan, so a console is subscribed before an agent's first question as far as
it can be without any runtime waiting for it (docs/LIVE_PROTOCOL.md, Approvals)."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

from pct_runtime.runtime import Runtime
from pct_runtime.serve.client.live_client import watch_runtimes
from pct_runtime.serve.live.control import runtime_registry_dir
from pct_runtime.serve.run import LiveControl


async def test_a_registration_is_reported_without_waiting_for_the_scan(tmp_path: Path) -> None:
    runtime_registry_dir(tmp_path)
    seen: asyncio.Queue[tuple[str, int]] = asyncio.Queue()

    async def watch() -> None:
        async for change, entry in watch_runtimes(tmp_path, interval=3600):
            seen.put_nowait((change, entry.pid))

    watcher = asyncio.ensure_future(watch())
    await asyncio.sleep(3)  # the directory watch is running (it starts at once)
    runtime = Runtime(agent_dir=tmp_path, cwd=tmp_path)
    await runtime.start()
    control = LiveControl(runtime, "serve", kind="pct serve", mcp="stdio")
    try:
        await control.start()
        # With an hour between scans, only the directory watch can report these.
        assert await asyncio.wait_for(seen.get(), 30) == ("added", os.getpid())
        await control.aclose()
        assert await asyncio.wait_for(seen.get(), 30) == ("removed", os.getpid())
    finally:
        watcher.cancel()
        await asyncio.gather(watcher, return_exceptions=True)
        await control.aclose()
        await runtime.aclose()
