# ruff: noqa: ASYNC240  (blocking file checks are fine in tests)
"""Capture, lazy recovery files, snapshots and owner cleanup."""

from __future__ import annotations

import asyncio
import os
import stat
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pct_runtime.output import OutputOwner, RecoveryRecord
from pct_runtime.output import capture as capture_module


@pytest.fixture
def owner_root(tmp_path: Path) -> Path:
    root = tmp_path / "tmp"
    root.mkdir()
    return root


async def test_small_capture_needs_no_file(owner_root: Path) -> None:
    owner = OutputOwner(root=owner_root)
    cap = owner.open_capture("stdout")
    cap.append("hello")
    cap.finish()
    rec = await cap.flush()
    assert rec == RecoveryRecord("complete", None, 5, 5, None)
    assert cap.memory_text() == "hello"
    assert list(owner_root.iterdir()) == []
    assert await owner.close() == []


async def test_publish_creates_private_file_even_when_empty(owner_root: Path) -> None:
    owner = OutputOwner(root=owner_root)
    cap = owner.open_capture("stderr")
    rec = await cap.publish()
    assert rec.path is not None
    assert rec.state == "capturing"
    path = Path(rec.path)
    assert path.parent.name.startswith("pct-output-")
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    assert path.name.endswith(".txt")
    assert len(path.stem) == 36
    cap.append("later text é")
    cap.finish()
    rec = await cap.flush()
    assert rec.state == "complete"
    assert rec.path == str(path)
    assert path.read_text("utf-8") == "later text é"
    assert rec.bytes == rec.captured_bytes == len("later text é".encode())
    assert await owner.close() == []
    assert not path.exists()
    assert not path.parent.exists()


async def test_prefix_survives_and_spills_past_limit(owner_root: Path) -> None:
    owner = OutputOwner(root=owner_root)
    cap = owner.open_capture("stdout", prefix_limit=16)
    cap.append("0123456789")
    assert not cap.has_file
    cap.append("abcdefghij")  # 20 > 16: spills prefix + later text
    await cap.ready()
    cap.append("XYZ")
    cap.finish()
    rec = await cap.flush()
    assert rec.state == "complete"
    assert rec.path is not None
    assert Path(rec.path).read_text() == "0123456789abcdefghijXYZ"
    assert rec.to_dict() == {
        "state": "complete",
        "path": rec.path,
        "bytes": 23,
        "captured_bytes": 23,
    }
    await owner.close()


async def test_backpressure_and_overload(owner_root: Path) -> None:
    owner = OutputOwner(root=owner_root)
    cap = owner.open_capture("stdout", prefix_limit=4)
    await cap.publish()
    for _ in range(16):
        cap.append(b"x")
    assert cap.blocked
    cap.append(b"y")  # producer ignored backpressure: text is lost, capture is partial
    rec = cap.snapshot()
    assert rec.state == "partial"
    assert rec.reason == "overload"
    assert rec.bytes == 17
    cap.finish()
    await owner.close()


async def test_ready_waits_for_writer(owner_root: Path) -> None:
    owner = OutputOwner(root=owner_root)
    cap = owner.open_capture("stdout", prefix_limit=1024)
    await cap.publish()
    total = 0
    for _ in range(200):
        await cap.ready()
        cap.append(b"z" * 10_000)
        total += 10_000
    cap.finish()
    rec = await cap.flush()
    assert rec.state == "complete"
    assert rec.captured_bytes == total
    assert rec.path is not None
    assert os.path.getsize(rec.path) == total
    await owner.close()


async def test_io_error_makes_capture_unavailable(tmp_path: Path) -> None:
    owner = OutputOwner(root=tmp_path / "does-not-exist")
    cap = owner.open_capture("stdout")
    cap.append("abc")
    rec = await cap.publish()
    assert rec.state == "unavailable"
    assert rec.reason == "io-error"
    assert rec.path is None
    assert rec.bytes == 3
    await owner.close()


async def test_missing_file_is_reported(owner_root: Path) -> None:
    owner = OutputOwner(root=owner_root)
    cap = owner.open_capture("stdout")
    cap.append("abc")
    cap.finish()
    rec = await cap.publish()
    rec = await cap.flush()
    assert rec.path is not None
    os.unlink(rec.path)
    rec = cap.snapshot()
    assert rec.state == "partial"
    assert rec.reason == "missing"
    await owner.close()


async def test_source_error_is_partial(owner_root: Path) -> None:
    owner = OutputOwner(root=owner_root)
    cap = owner.open_capture("stdout")
    cap.append("abc")
    cap.finish(source_error=True)
    rec = cap.snapshot()
    assert (rec.state, rec.reason) == ("partial", "source-error")
    await owner.close()


async def test_owner_close_marks_running_captures_and_keeps_foreign_files(
    owner_root: Path,
) -> None:
    owner = OutputOwner(root=owner_root)
    cap = owner.open_capture("stdout")
    rec = await cap.publish()
    assert rec.path is not None
    directory = Path(rec.path).parent
    foreign = directory / "someone-else.txt"
    foreign.write_text("keep me")
    failed = await owner.close()
    assert cap.snapshot().reason == "owner-closed"
    assert not Path(rec.path).exists()
    assert foreign.exists()  # non-recursive, identity-checked cleanup
    assert failed == [str(directory)]
    late = owner.open_capture("late")
    late.append("x")
    assert late.snapshot().state == "unavailable"
    assert late.snapshot().reason == "owner-closed"
    assert await owner.close() == []


async def test_replaced_file_is_not_deleted(owner_root: Path) -> None:
    owner = OutputOwner(root=owner_root)
    cap = owner.open_capture("stdout")
    rec = await cap.publish()
    cap.finish()
    await cap.flush()
    assert rec.path is not None
    os.unlink(rec.path)
    Path(rec.path).write_text("replacement")
    await owner.close()
    assert Path(rec.path).read_text() == "replacement"


async def test_many_captures_share_one_directory(owner_root: Path) -> None:
    owner = OutputOwner(root=owner_root)
    caps = [owner.open_capture(f"c{i}") for i in range(5)]
    recs = await asyncio.gather(*(c.publish() for c in caps))
    dirs = {Path(r.path).parent for r in recs if r.path}
    assert len(dirs) == 1
    assert len({r.path for r in recs}) == 5
    for c in caps:
        c.finish()
    await owner.close()
    assert list(owner_root.iterdir()) == []


def test_record_line_format(tmp_path: Path) -> None:
    rec = RecoveryRecord("partial", str(tmp_path / "x.txt"), 10, 4, "io-error")
    assert rec.line("stdout") == (
        f"stdout recovery: partial (io-error) — {tmp_path / 'x.txt'} [4/10 UTF-8 bytes captured]"
    )
    assert RecoveryRecord("complete", None, 0, 0).line("stderr") == (
        "stderr recovery: complete [0/0 UTF-8 bytes captured]"
    )


@settings(max_examples=60, deadline=None)
@given(
    chunks=st.lists(st.binary(min_size=1, max_size=300), min_size=1, max_size=80),
    caps=st.lists(st.integers(min_value=1, max_value=700), min_size=1, max_size=20),
)
def test_write_all_survives_any_partial_writev(chunks: list[bytes], caps: list[int]) -> None:
    """writev may take any prefix of the batch; every byte still lands once, in order."""
    written = bytearray()
    calls = iter(caps * 1000)

    def short_writev(fd: int, views: list[memoryview]) -> int:
        assert len(views) <= capture_module.IOV_BATCH
        take = next(calls)
        data = b"".join(bytes(v) for v in views)[:take]
        written.extend(data)
        return len(data)

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(os, "writev", short_writev)
        capture_module._write_all(-1, chunks)
    assert bytes(written) == b"".join(chunks)
