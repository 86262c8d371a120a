"""A full disk while a pre-image is copied or a restored file is staged: the partial file is
removed at once (it used to sit in journal-blobs/pending for an hour, keeping the disk
full). On a real 1 MiB tmpfs when the runner is root, and by an injected failure always."""

from __future__ import annotations

import errno
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from pct_runtime.capabilities.apply_patch.executor import apply_patch_text
from pct_runtime.journal import Journal, PatchCapture, undo_patch
from tests.journal.helpers import make_record

BIG = "".join(f"line {n:06d} of a file bigger than the small disk\n" for n in range(50_000))


def _used(folder: Path) -> int:
    return sum(p.lstat().st_size for p in folder.rglob("*") if p.is_file())


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    """A 1 MiB tmpfs mounted for this test (root only), unmounted after it."""
    if os.geteuid() != 0 or shutil.which("mount") is None:
        pytest.skip("mounting a small tmpfs needs root")
    mount_point = tmp_path / "small"
    mount_point.mkdir()
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=1m,mode=0755", "tmpfs", str(mount_point)],
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.strip()}")
    try:
        yield mount_point
    finally:
        subprocess.run(["umount", str(mount_point)], check=False)


def _fill(path: Path, leave: int) -> None:
    """Fill the disk `path` is on, then free `leave` bytes."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT, 0o600)
    try:
        while True:
            try:
                os.write(fd, b"\0" * 65536)
            except OSError as exc:
                if exc.errno != errno.ENOSPC:
                    raise
                break
    finally:
        os.close(fd)
    os.truncate(path, max(0, path.stat().st_size - leave))


def _half_then_full(real: object) -> object:
    """A `write_all` that writes half of what it is given, then fails as a full disk."""

    def write_all(fd: int, data: bytes) -> None:
        os.write(fd, bytes(data[: len(data) // 2]))
        raise OSError(errno.ENOSPC, "No space left on device")

    return write_all


def test_a_pre_image_copy_on_a_full_disk_leaves_nothing(small_disk: Path, tmp_path: Path) -> None:
    """The agent dir on a 1 MiB disk, the file (2.5 MB) elsewhere: its pre-image is copied
    (no hard link across file systems) and the copy runs out of room."""
    agent, work = small_disk / "agent", tmp_path / "work"
    work.mkdir()
    (work / "big.txt").write_text(BIG)
    first = BIG.split("\n", 1)[0]
    patch = f"*** Begin Patch\n*** Update File: big.txt\n@@\n-{first}\n+changed\n*** End Patch\n"
    env = {**os.environ, "PI_CODING_AGENT_DIR": str(agent)}
    done = subprocess.run(
        [sys.executable, "-m", "pct_runtime.cli", "apply-patch", "--cwd", str(work)],
        input=patch,
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr  # the patch goes on
    assert "pct journal:" in done.stderr
    assert "not undoable" in done.stderr
    assert (work / "big.txt").read_text().startswith("changed\n")
    pending = agent / "pct" / "journal-blobs" / "pending"
    assert [p.name for p in pending.iterdir()] == []
    assert _used(agent) < 64 * 1024  # the spooled row, no partial copy


def test_an_undo_staged_on_a_full_disk_leaves_nothing(small_disk: Path, tmp_path: Path) -> None:
    """The working directory on a 1 MiB disk, nearly full when the undo stages 500 kB."""
    agent, work = tmp_path / "agent", small_disk / "work"
    work.mkdir()
    body = "x" * 500_000 + "\n"
    (work / "gone.txt").write_text(body)
    with Journal.open(agent) as journal:
        capture = PatchCapture(journal.blobs)
        apply_patch_text(
            "*** Begin Patch\n*** Delete File: gone.txt\n*** End Patch", work, None, capture
        )
        record = make_record("apply_patch", patch_files=capture.files())
        journal.record(record)
        _fill(small_disk / "filler", leave=200_000)
        before = sorted(p.name for p in work.iterdir())
        free = shutil.disk_usage(small_disk).free
        outcome = undo_patch(journal, record.call_id)
        assert not outcome.ok
        assert "writing the restored files failed" in outcome.message
        assert "Nothing was changed" in outcome.message
        assert sorted(p.name for p in work.iterdir()) == before
        assert shutil.disk_usage(small_disk).free == free
        assert journal.get(record.call_id) is not None
        assert journal.get(record.call_id).undoable  # type: ignore[union-attr]


def test_an_injected_full_disk_during_a_pre_image_copy_leaves_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import pct_runtime.journal.blobs as blobs

    work = tmp_path / "work"
    work.mkdir()
    (work / "a.txt").write_text("one\n" * 1000)
    os.link(work / "a.txt", work / "twin.txt")  # another name: the image is copied
    with Journal.open(tmp_path / "agent") as journal:
        capture = PatchCapture(journal.blobs)
        monkeypatch.setattr(blobs, "write_all", _half_then_full(blobs.write_all))
        apply_patch_text(
            "*** Begin Patch\n*** Delete File: a.txt\n*** End Patch", work, witness=capture
        )
        monkeypatch.undo()
        assert capture.failed is not None
        assert "No space left" in capture.failed
        assert capture.files() == ()
        assert list(journal.blobs.pending_dir.iterdir()) == []
    assert not (work / "a.txt").exists()  # the patch itself went on


def test_an_injected_full_disk_while_undo_stages_leaves_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import pct_runtime.journal.restore as restore

    work = tmp_path / "work"
    (work / "sub").mkdir(parents=True)
    (work / "sub" / "a.txt").write_text("one\n")
    (work / "sub" / "b.txt").write_text("bee\n")
    with Journal.open(tmp_path / "agent") as journal:
        capture = PatchCapture(journal.blobs)
        apply_patch_text(
            "*** Begin Patch\n*** Update File: sub/a.txt\n@@\n-one\n+two\n"
            "*** Delete File: sub/b.txt\n*** End Patch",
            work,
            witness=capture,
        )
        record = make_record("apply_patch", patch_files=capture.files())
        journal.record(record)
        monkeypatch.setattr(restore, "write_all", _half_then_full(restore.write_all))
        outcome = undo_patch(journal, record.call_id)
        monkeypatch.undo()
        assert not outcome.ok
        assert "No space left" in outcome.message
        assert sorted(p.name for p in (work / "sub").iterdir()) == ["a.txt"]
        assert (work / "sub" / "a.txt").read_text() == "two\n"
        again = undo_patch(journal, record.call_id)  # nothing was spent
        assert again.ok, again.message
        assert (work / "sub" / "b.txt").read_text() == "bee\n"
