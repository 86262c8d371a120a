"""The output pump on a real pipe and a real loop: order, credit, quiet hand-back, halt."""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import os
import threading
import time
from collections.abc import Iterator

import pytest

from pct_runtime.capabilities.shell import pump as pump_module
from pct_runtime.capabilities.shell.pump import Pump, PumpEnd


@pytest.fixture
def pipe() -> Iterator[list[int]]:
    """[read end (non-blocking), write end]; a test that closes an end removes it."""
    r, w = os.pipe()
    os.set_blocking(r, False)
    fds = [r, w]
    yield fds
    for fd in fds:
        with contextlib.suppress(OSError):
            os.close(fd)


class Recorder:
    """Collects what a pump delivers; grants credit only when told to."""

    def __init__(self, auto_grant: bool) -> None:
        self.batches: list[bytes] = []
        self.ends: list[PumpEnd] = []
        self.auto_grant = auto_grant
        self.pump: Pump | None = None
        self.news = asyncio.Event()

    def deliver(self, data: bytes, end: PumpEnd | None) -> None:
        if data:
            self.batches.append(data)
        if end is not None:
            self.ends.append(end)
        elif self.auto_grant and self.pump is not None:
            self.pump.grant()
        self.news.set()

    async def until(self, check: object, within: float = 5.0) -> None:
        async with asyncio.timeout(within):
            while not check():  # type: ignore[operator]
                self.news.clear()
                await self.news.wait()


def _start(fd: int, recorder: Recorder) -> Pump:
    pump = Pump(fd, asyncio.get_running_loop(), recorder.deliver)
    recorder.pump = pump
    pump.start()
    return pump


async def test_every_byte_arrives_in_order_and_eof_ends_the_pump(pipe: list[int]) -> None:
    r, w = pipe
    recorder = Recorder(auto_grant=True)
    pump = _start(r, recorder)
    sent = bytes(range(256)) * 20_000  # 5 MB: several batches

    def write() -> None:
        os.write(w, sent)
        pipe.remove(w)
        os.close(w)

    writer = threading.Thread(target=write)
    writer.start()
    await recorder.until(lambda: recorder.ends)
    writer.join()
    assert recorder.ends == ["eof"]
    assert b"".join(recorder.batches) == sent
    assert max(map(len, recorder.batches)) <= pump_module.READ_SIZE
    pump.join()


async def test_no_second_batch_without_credit(pipe: list[int]) -> None:
    r, w = pipe
    recorder = Recorder(auto_grant=False)
    pump = _start(r, recorder)
    os.write(w, b"a" * 1000)
    await recorder.until(lambda: recorder.batches)
    os.write(w, b"b" * 1000)
    await asyncio.sleep(0.05)  # time for a second post, were one allowed
    assert recorder.batches == [b"a" * 1000]
    pump.grant()
    await recorder.until(lambda: len(recorder.batches) == 2)
    assert recorder.batches[1] == b"b" * 1000
    pump.halt()


async def test_a_quiet_pipe_goes_back_to_the_loop_open(pipe: list[int]) -> None:
    r, w = pipe
    recorder = Recorder(auto_grant=True)
    pump = _start(r, recorder)
    os.write(w, b"burst")
    await recorder.until(lambda: recorder.ends, within=2 + pump_module.QUIET_SECONDS)
    assert recorder.ends == ["quiet"]
    assert recorder.batches == [b"burst"]
    pump.join()
    os.write(w, b"later")  # the fd is still open, and the loop's to read now
    assert os.read(r, 100) == b"later"


async def test_halt_stops_a_pump_waiting_for_credit_and_one_in_poll(
    pipe: list[int],
) -> None:
    r, w = pipe
    recorder = Recorder(auto_grant=False)
    pump = _start(r, recorder)
    os.write(w, b"x")
    await recorder.until(lambda: recorder.batches)
    os.write(w, b"y")  # gathered, then held for credit
    await asyncio.sleep(0.02)
    pump.halt()
    assert not [t for t in threading.enumerate() if t.name == "pct-output-pump"]
    idle = Recorder(auto_grant=True)
    other = _start(r, idle)  # nothing to read: it sits in poll
    await asyncio.sleep(0.01)
    other.halt()
    assert not [t for t in threading.enumerate() if t.name == "pct-output-pump"]
    await asyncio.sleep(0.02)
    assert recorder.ends == []
    assert idle.ends == []


def test_a_closed_loop_ends_the_thread(pipe: list[int]) -> None:
    r, w = pipe
    loop = asyncio.new_event_loop()
    loop.close()
    pump = Pump(r, loop, lambda data, end: None)
    pump.start()
    os.write(w, b"z")
    pump.join()  # returns: posting to the closed loop ended the thread


async def test_a_full_pipe_is_one_read_and_a_trickle_is_gathered(
    pipe: list[int], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A pipe already holding GATHER_BYTES is read at once, whole, in one batch; a few bytes
    make the pump nap (letting the pipe fill) before it reads them."""
    r, w = pipe
    fcntl.fcntl(r, fcntl.F_SETPIPE_SZ, 1 << 20)
    naps: list[float] = []
    sleep = time.sleep

    def recording(seconds: float) -> None:
        naps.append(seconds)
        sleep(seconds)

    monkeypatch.setattr(time, "sleep", recording)
    big = b"B" * (pump_module.GATHER_BYTES + 4096)
    os.write(w, big)  # in the pipe before the pump's first look
    recorder = Recorder(auto_grant=True)
    pump = _start(r, recorder)
    await recorder.until(lambda: recorder.batches)
    assert naps == []
    assert recorder.batches == [big]
    os.write(w, b"small")
    await recorder.until(lambda: len(recorder.batches) == 2)
    assert naps, "a trickle was read without gathering"
    assert set(naps) == {pump_module.NAP_SECONDS}
    assert recorder.batches[1] == b"small"
    pump.halt()
