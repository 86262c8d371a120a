"""Many live subscribers: every one still gets every event, snapshot and followed output,
and a broadcast is encoded once for all of them (not once per connection)."""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from pct_runtime.runtime import Runtime
from pct_runtime.serve.client.running import control_token
from pct_runtime.serve.live import hub as live_hub
from pct_runtime.serve.live.control import list_runtimes
from pct_runtime.serve.run import LiveControl
from tests.e2e.pct_procs import write_config

SUBSCRIBERS = 200


@pytest.fixture
async def live(tmp_path: Path) -> AsyncIterator[tuple[Runtime, LiveControl]]:
    agent = tmp_path / "agent"
    agent.mkdir()
    write_config(agent, {"shellSessions": {"enabled": True}})
    runtime = Runtime(agent_dir=agent, cwd=tmp_path)
    await runtime.start()
    control = LiveControl(runtime, "test runtime", kind="pct serve", mcp="stdio")
    await control.start()
    try:
        yield runtime, control
    finally:
        await control.aclose()
        await runtime.aclose()


class Subscriber:
    """A raw console connection that records every line it receives."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader = reader
        self.writer = writer
        self.lines: list[dict[str, object]] = []
        self.changed = asyncio.Event()
        self.task = asyncio.ensure_future(self._read())

    async def _read(self) -> None:
        while line := await self.reader.readline():
            self.lines.append(json.loads(line))
            self.changed.set()

    async def until(self, check: object, within: float = 20.0) -> dict[str, object]:
        assert callable(check)

        async def find() -> dict[str, object]:
            seen = 0
            while True:
                for line in self.lines[seen:]:
                    if check(line):
                        return line
                seen = len(self.lines)
                self.changed.clear()
                await self.changed.wait()

        return await asyncio.wait_for(find(), within)

    async def close(self) -> None:
        self.writer.close()
        self.task.cancel()
        with contextlib.suppress(BaseException):
            await self.task


async def subscribe(runtime: Runtime, count: int) -> list[Subscriber]:
    (entry,) = list_runtimes(runtime.agent_dir)
    host, _, port = entry.control.rpartition(":")
    token = control_token(runtime.agent_dir)
    out: list[Subscriber] = []
    for _ in range(count):
        reader, writer = await asyncio.open_connection(host, int(port), limit=1 << 24)
        request = {"token": token, "op": "subscribe", "version": 1, "role": "console"}
        writer.write(json.dumps(request).encode() + b"\n")
        accept = json.loads(await reader.readline())
        assert accept["ok"] is True, accept
        out.append(Subscriber(reader, writer))
    return out


def _is_event_of(text: str) -> object:
    return lambda m: m.get("type") == "event" and text in str(m.get("text"))


async def test_two_hundred_subscribers_all_get_events_snapshots_and_output(
    live: tuple[Runtime, LiveControl],
) -> None:
    runtime, control = live
    subscribers = await subscribe(runtime, SUBSCRIBERS)
    try:
        await asyncio.gather(*(s.until(lambda m: m.get("type") == "snapshot") for s in subscribers))
        assert len(control.hub.connections) == SUBSCRIBERS
        session = await runtime.open_session("mcp")
        cmd = "sleep 0.5; for i in $(seq 1 50); do echo many-$i; done"
        started = await session.call("exec_command", {"cmd": cmd, "yield_time_ms": 100})
        job = started.details["session_id"]
        await asyncio.gather(*(s.until(_is_event_of("exec_command")) for s in subscribers))

        def shows_job(m: dict[str, object]) -> bool:
            work = m.get("work")
            return (
                m.get("type") == "snapshot"
                and isinstance(work, list)
                and any(isinstance(w, dict) and w.get("id") == job for w in work)
            )

        await asyncio.gather(*(s.until(shows_job) for s in subscribers))
        for i, s in enumerate(subscribers):
            follow = {"type": "follow", "id": i, "work_id": job}
            s.writer.write(json.dumps(follow).encode() + b"\n")

        def ended(m: dict[str, object]) -> bool:
            return m.get("type") == "output" and m.get("ended") is True

        await asyncio.gather(*(s.until(ended) for s in subscribers))
        expected = "".join(f"many-{i}\n" for i in range(1, 51))
        for s in subscribers:
            text = "".join(str(m["data"]) for m in s.lines if m.get("type") == "output")
            assert text == expected
            replies = [m for m in s.lines if m.get("type") == "reply"]
            assert [r["ok"] for r in replies] == [True]
    finally:
        for s in subscribers:
            await s.close()


async def test_a_broadcast_is_encoded_once_for_every_subscriber(
    live: tuple[Runtime, LiveControl], monkeypatch: pytest.MonkeyPatch
) -> None:
    runtime, control = live
    subscribers = await subscribe(runtime, 50)
    try:
        await asyncio.gather(*(s.until(lambda m: m.get("type") == "snapshot") for s in subscribers))
        encoded: list[object] = []
        real = live_hub.encode_line

        def counting(message: dict[str, object]) -> bytes:
            encoded.append(message.get("type"))
            return real(message)  # type: ignore[arg-type]

        monkeypatch.setattr(live_hub, "encode_line", counting)
        for n in range(5):
            runtime.events.publish("pct.runtime", {"type": "test-burst", "n": n})
        control.hub.changed()
        await asyncio.gather(*(s.until(_is_event_of("test-burst n=4")) for s in subscribers))
        await asyncio.gather(*(s.until(lambda m: m.get("type") == "snapshot") for s in subscribers))
        assert encoded.count("event") == 5  # not 5 x 50
        assert encoded.count("snapshot") <= 2  # one build for all (a second if timed apart)
        for s in subscribers:
            texts = [m["text"] for m in s.lines if m.get("type") == "event"]
            assert [t for t in texts if "test-burst" in str(t)] == [
                f"test-burst n={n}" for n in range(5)
            ]
    finally:
        for s in subscribers:
            await s.close()
