# ruff: noqa: ASYNC230, ASYNC240  (blocking file checks are fine in tests)
"""A 1 GiB output stream through one job: bounded memory and a complete recovery file."""

from __future__ import annotations

import asyncio
import os
import signal
import threading
from pathlib import Path

import pytest

from pct_runtime.capabilities.shell import ShellManager
from pct_runtime.capabilities.shell import job as job_module
from pct_runtime.capabilities.shell import pump as pump_module

GIB = 1 << 30


def _rss_bytes() -> int:
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    raise RuntimeError("no VmRSS")


@pytest.mark.slow
@pytest.mark.skipif(not os.path.exists("/proc/self/status"), reason="needs Linux /proc")
async def test_one_gib_of_output_with_bounded_memory(manager: ShellManager, tmp_path: Path) -> None:
    baseline = _rss_bytes()
    peak = [baseline]
    stop = asyncio.Event()

    async def sample() -> None:
        while not stop.is_set():
            peak[0] = max(peak[0], _rss_bytes())
            await asyncio.sleep(0.02)

    sampler = asyncio.create_task(sample())
    cmd = f"head -c {GIB} /dev/zero | tr '\\0' 'g'; echo tail >&2"
    result = await manager.start({"cmd": cmd, "maxOutputBytes": 1024}, cwd=tmp_path)
    polls = 1
    while result.details["status"] == "running":
        result = await manager.write(
            {"session_id": result.details["session_id"], "maxOutputBytes": 1024}
        )
        polls += 1
    stop.set()
    await sampler
    d = result.details
    assert d["status"] == "completed"
    assert d["exit_code"] == 0
    rec = d["recovery"]["stdout"]
    assert rec["state"] == "complete"
    assert rec["bytes"] == rec["captured_bytes"] == GIB
    assert os.path.getsize(rec["path"]) == GIB
    with open(rec["path"], "rb") as fh:
        assert fh.read(16) == b"g" * 16
        fh.seek(GIB - 16)
        assert fh.read() == b"g" * 16
    growth = peak[0] - baseline
    assert growth < 64 * 1024 * 1024, f"RSS grew by {growth / 1e6:.1f} MB over {polls} polls"


def _pump_threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name == "pct-output-pump"]


async def test_bulk_output_goes_to_a_pump_and_comes_back_when_quiet(
    manager: ShellManager, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A read of BULK_READ or more hands the pipe to a pump thread; a short line stays on the
    loop's reader; once the stream goes quiet the loop reads again (a line typed after the
    burst still arrives); every byte reaches the file and no pump outlives the job."""
    started: list[int] = []
    start = job_module.ShellJob._start_pump

    def counting(self: job_module.ShellJob, stream: object, fd: int) -> None:
        started.append(fd)
        start(self, stream, fd)  # type: ignore[arg-type]

    monkeypatch.setattr(job_module.ShellJob, "_start_pump", counting)
    small = await manager.start({"cmd": "echo hi", "yield_time_ms": 2000}, cwd=tmp_path)
    assert small.details["status"] == "completed"
    assert small.details["stdout"] == "hi\n"
    assert started == []

    burst = 8 * pump_module.READ_SIZE
    cmd = f'head -c {burst} /dev/zero; read line; echo "got $line"'
    result = await manager.start({"cmd": cmd, "maxOutputBytes": 1024}, cwd=tmp_path)
    sid = result.details["session_id"]
    assert started, "bulk output never started a pump"
    job = manager._jobs[sid]
    for _ in range(100):  # the pump gives the pipe back after QUIET_SECONDS of silence
        if job.streams[0].pump is None:
            break
        await asyncio.sleep(0.02)
    assert job.streams[0].pump is None, "the pump never handed the quiet pipe back"
    assert not _pump_threads()
    result = await manager.write(
        {"session_id": sid, "input": "back\n", "yield_time_ms": 5000, "maxOutputBytes": 1024}
    )
    for _ in range(50):
        if result.details["status"] != "running":
            break
        result = await manager.write({"session_id": sid, "maxOutputBytes": 1024})
    assert result.details["status"] == "completed"
    rec = result.details["recovery"]["stdout"]
    assert rec["state"] == "complete"
    assert rec["bytes"] == rec["captured_bytes"] == burst + len("got back\n")
    with open(rec["path"], "rb") as fh:
        fh.seek(burst)
        assert fh.read() == b"got back\n"
    assert not _pump_threads()


async def test_a_job_released_mid_burst_halts_its_pump(
    manager: ShellManager, tmp_path: Path
) -> None:
    """Releasing a job whose pipe a pump is draining stops the thread before the fd closes."""
    result = await manager.start(
        {"cmd": "exec yes", "yield_time_ms": 200, "maxOutputBytes": 1024}, cwd=tmp_path
    )
    sid = result.details["session_id"]
    job = manager._jobs[sid]
    for _ in range(100):
        if job.streams[0].pump is not None:
            break
        await asyncio.sleep(0.01)
    assert job.streams[0].pump is not None, "yes never started a pump"
    fd = job.streams[0].fd
    assert fd is not None
    job.release()
    assert job.streams[0].fd is None
    assert job.streams[0].pump is None
    assert not _pump_threads()
    with pytest.raises(OSError, match="Bad file descriptor"):
        os.fstat(fd)
    os.killpg(job.pgid, signal.SIGKILL)


@pytest.mark.parametrize("failure", ["no-fd", "no-thread"])
async def test_without_a_pump_the_loop_keeps_reading(
    manager: ShellManager, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, failure: str
) -> None:
    """No fd for the wake pipe, or no thread to be had: the loop's reader carries on and
    every byte still reaches the file."""

    def refuse(*_args: object, **_kwargs: object) -> None:
        if failure == "no-fd":
            raise OSError(24, "Too many open files")
        raise RuntimeError("can't start new thread")

    target = "__init__" if failure == "no-fd" else "start"
    monkeypatch.setattr(pump_module.Pump, target, refuse)
    size = 4 * pump_module.READ_SIZE
    result = await manager.start(
        {"cmd": f"head -c {size} /dev/zero", "maxOutputBytes": 1024}, cwd=tmp_path
    )
    for _ in range(20):  # a stream nobody reads again would leave it running
        if result.details["status"] != "running":
            break
        result = await manager.write(
            {"session_id": result.details["session_id"], "yield_time_ms": 200}
        )
    assert result.details["status"] == "completed"
    rec = result.details["recovery"]["stdout"]
    assert rec["state"] == "complete"
    assert rec["bytes"] == rec["captured_bytes"] == size
    assert not _pump_threads()
