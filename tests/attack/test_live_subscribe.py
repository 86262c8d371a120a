"""A subscribe request is taken at its word: `version` is the integer 1, nothing equal to it.

JSON `true` and `1.0` compare equal to 1 in Python, so they used to be accepted as
version 1; and a version sent as the string "1" was refused with "unsupported protocol
version 1; this runtime speaks 1", which names no difference the sender can fix.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from pct_runtime.runtime import Runtime
from pct_runtime.serve.client.running import control_token
from pct_runtime.serve.live.control import list_runtimes
from pct_runtime.serve.run import LiveControl


@pytest.fixture
async def runtime(tmp_path: Path) -> AsyncIterator[Runtime]:
    agent = tmp_path / "agent"
    agent.mkdir()
    runtime = Runtime(agent_dir=agent, cwd=tmp_path)
    await runtime.start()
    control = LiveControl(runtime, "test runtime", kind="pct serve", mcp="stdio")
    await control.start()
    try:
        yield runtime
    finally:
        await control.aclose()
        await runtime.aclose()


async def _subscribe(runtime: Runtime, version: object) -> dict[str, object]:
    (entry,) = list_runtimes(runtime.agent_dir)
    host, _, port = entry.control.rpartition(":")
    reader, writer = await asyncio.open_connection(host, int(port))
    try:
        request = {
            "token": control_token(runtime.agent_dir),
            "op": "subscribe",
            "version": version,
            "role": "monitor",
        }
        writer.write(json.dumps(request).encode() + b"\n")
        reply: dict[str, object] = json.loads(await asyncio.wait_for(reader.readline(), 10))
        return reply
    finally:
        writer.close()


@pytest.mark.parametrize(
    ("version", "shown"),
    [(True, "true"), (1.0, "1.0"), ("1", '"1"'), (None, "null"), (2, "2")],
)
async def test_only_the_integer_one_is_version_one(
    runtime: Runtime, version: object, shown: str
) -> None:
    reply = await _subscribe(runtime, version)
    assert reply == {
        "ok": False,
        "error": f"unsupported protocol version {shown}; this runtime speaks 1",
    }


async def test_version_one_is_accepted(runtime: Runtime) -> None:
    reply = await _subscribe(runtime, 1)
    assert reply["ok"] is True
    assert reply["version"] == 1
