"""A followed work's live log: everything captured before the follow, then every chunk,
by offset; a bounded window whose older text is left to the recovery file."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path

import pytest

from pct_runtime.output import Capture, OutputOwner
from pct_runtime.serve import live_output
from pct_runtime.serve.live_output import TrackedWork, WorkLog


class FakeCell:
    """A cell as the live view reads it: one capture, listeners, a terminal event."""

    def __init__(self, capture: Capture) -> None:
        self.id = "cell-test"
        self.state = "running"
        self.title = "loop()"
        self.terminal = asyncio.Event()
        self.capture = capture
        self.listeners: list[Callable[[str], None]] = []

    def output_capture(self) -> Capture:
        return self.capture

    def add_output_listener(self, listener: Callable[[str], None]) -> Callable[[], None]:
        self.listeners.append(listener)
        return lambda: self.listeners.remove(listener) if listener in self.listeners else None

    def emit(self, text: str) -> None:
        self.capture.append(text)
        for listener in list(self.listeners):
            listener(text)

    async def stop(self) -> bool:
        return False


async def settled(log: WorkLog) -> None:
    for _ in range(200):
        if log.ready:
            return
        await asyncio.sleep(0.01)
    raise AssertionError("the log never loaded")


async def test_before_and_after_the_follow_in_order(tmp_path: Path) -> None:
    owner = OutputOwner(temp_root=tmp_path)
    cell = FakeCell(owner.open_capture("output", prefix_limit=16))
    cell.emit("spilled-to-a-file-0123456789\n")  # past the prefix: read back from the file
    log = WorkLog(TrackedWork("s", "cell", cell=cell))  # type: ignore[arg-type]
    cell.emit("live-1\n")  # arrives while the file is read: kept after it
    await settled(log)
    cell.emit("live-2\n")
    offset, text = log.read(0, 1 << 20)
    assert (offset, text) == (0, "spilled-to-a-file-0123456789\nlive-1\nlive-2\n")
    assert log.read(30, 4) == (30, "ive-")
    cell.terminal.set()
    await asyncio.sleep(0.05)
    assert log.ended
    await owner.close()


async def test_a_follower_behind_the_window_jumps_past_the_gap(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(live_output, "MAX_LOG_CHARS", 20)
    owner = OutputOwner(temp_root=tmp_path)
    cell = FakeCell(owner.open_capture("output"))
    log = WorkLog(TrackedWork("s", "cell", cell=cell))  # type: ignore[arg-type]
    await settled(log)
    for i in range(10):
        cell.emit(f"chunk-{i}\n")  # 8 characters each
    assert log.total == 80
    offset, text = log.read(0, 1 << 20)
    assert offset == log.start > 0  # the jump tells the follower text was not held
    assert text == "".join(f"chunk-{i}\n" for i in range(10))[offset:]
    assert len(text) <= 20
    log.close()
    await owner.close()
