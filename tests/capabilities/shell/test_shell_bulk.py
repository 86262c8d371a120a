# ruff: noqa: ASYNC230, ASYNC240  (blocking file checks are fine in tests)
"""A 1 GiB output stream through one job: bounded memory and a complete recovery file."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import pytest

from pct_runtime.capabilities.shell import ShellManager
from pct_runtime.capabilities.shell import job as job_module

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


async def test_bulk_output_rests_the_reader_and_small_output_does_not(
    manager: ShellManager, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A read of BULK_READ or more (short of a full READ_SIZE) rests the reader so the pipe
    fills; a short line is read and shown at once; every byte still reaches the file."""
    rests: list[int] = []
    rest = job_module.ShellJob._rest

    def counting(self: job_module.ShellJob, stream: object) -> None:
        rests.append(1)
        rest(self, stream)  # type: ignore[arg-type]

    monkeypatch.setattr(job_module.ShellJob, "_rest", counting)
    small = await manager.start({"cmd": "echo hi", "yield_time_ms": 2000}, cwd=tmp_path)
    assert small.details["status"] == "completed"
    assert small.details["stdout"] == "hi\n"
    assert rests == []

    # A stream faster than the reader, then, after a pause, one write of 3 x BULK_READ:
    # reads of at least BULK_READ and short of READ_SIZE.
    stream, tail = 8 * job_module.READ_SIZE, 3 * job_module.BULK_READ
    size = stream + tail
    cmd = f"head -c {stream} /dev/zero; sleep 0.05; dd if=/dev/zero bs={tail} count=1 2>/dev/null"
    result = await manager.start({"cmd": cmd, "maxOutputBytes": 1024}, cwd=tmp_path)
    for _ in range(50):  # a reader that never woke again would leave the job running
        if result.details["status"] != "running":
            break
        result = await manager.write(
            {"session_id": result.details["session_id"], "maxOutputBytes": 1024}
        )
    assert result.details["status"] == "completed"
    rec = result.details["recovery"]["stdout"]
    assert rec["state"] == "complete"
    assert rec["bytes"] == rec["captured_bytes"] == size
    assert rests, "bulk reads never rested the reader"
