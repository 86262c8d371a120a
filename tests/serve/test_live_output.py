"""A followed work's live log: everything captured before the follow, then every chunk,
by offset; a bounded window whose older text is left to the recovery file."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path

import pytest

from pct_runtime.output import Capture, OutputOwner
from pct_runtime.serve.live import worklog as live_output
from pct_runtime.serve.live.worklog import TrackedWork, WorkLog


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
    owner = OutputOwner(root=tmp_path)
    cell = FakeCell(owner.open_capture("output", prefix_limit=16))
    cell.emit("spilled-to-a-file-0123456789\n")  # past the prefix: read back from the file
    log = WorkLog(TrackedWork("s", "cell", cell=cell))  # type: ignore[arg-type]
    cell.emit("live-1\n")  # arrives while the file is read: kept after it
    await settled(log)
    cell.emit("live-2\n")
    offset, text = await log.read(0, 1 << 20)
    assert (offset, text) == (0, "spilled-to-a-file-0123456789\nlive-1\nlive-2\n")
    assert await log.read(30, 4) == (30, "ive-")
    cell.terminal.set()
    await asyncio.sleep(0.05)
    assert log.ended
    await owner.close()


@pytest.mark.parametrize("prefix", [1 << 20, 16], ids=["in-memory", "recovery-file"])
async def test_a_follower_behind_the_window_reads_it_back_from_the_capture(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, prefix: int
) -> None:
    monkeypatch.setattr(live_output, "MAX_LOG_CHARS", 20)
    monkeypatch.setattr(live_output, "PIECE_CHARS", 8)
    owner = OutputOwner(root=tmp_path)
    cell = FakeCell(owner.open_capture("output", prefix_limit=prefix))
    log = WorkLog(TrackedWork("s", "cell", cell=cell))  # type: ignore[arg-type]
    await settled(log)
    expected = "".join(f"chunk-é{i}\n" for i in range(10))  # 9 characters, 10 bytes each
    for i in range(10):
        cell.emit(f"chunk-é{i}\n")
    assert log.total == len(expected)
    text, offset = "", 0
    while offset < log.total:
        start, data = await log.read(offset, 7)
        assert start == offset  # nothing skipped although it left memory
        text += data
        offset += len(data)
    assert text == expected
    log.close()
    await owner.close()


async def test_text_older_than_the_first_follow_window_is_a_gap(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(live_output, "MAX_LOG_CHARS", 20)
    owner = OutputOwner(root=tmp_path)
    cell = FakeCell(owner.open_capture("output", prefix_limit=16))
    for i in range(10):
        cell.emit(f"line-{i}\n")  # 7 bytes each, 70 in the recovery file
    log = WorkLog(TrackedWork("s", "cell", cell=cell))  # type: ignore[arg-type]
    await settled(log)
    offset, text = await log.read(0, 1 << 20)
    assert offset > 0  # the jump: the start is in the recovery file
    assert text == "line-8\nline-9\n"
    assert offset + len(text) == log.total
    log.close()
    await owner.close()


async def test_the_piece_index_is_bounded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(live_output, "MAX_LOG_CHARS", 10)
    monkeypatch.setattr(live_output, "MAX_PIECES", 20)
    owner = OutputOwner(root=tmp_path)
    cell = FakeCell(owner.open_capture("output"))
    log = WorkLog(TrackedWork("s", "cell", cell=cell))  # type: ignore[arg-type]
    await settled(log)
    for i in range(100):
        cell.emit(f"{i % 10}")
        log._add(0, "x", 10**6)  # a chunk that does not continue the last: no merging
    assert len(log._pieces) <= 21
    offset, text = await log.read(0, 5)
    assert offset >= log.start > 0
    assert text
    log.close()
    await owner.close()
