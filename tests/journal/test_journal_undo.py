"""Undo of a patch: bytes and mode restored, refusal when a file changed, undo of an undo."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from pct_runtime.capabilities.apply_patch.executor import apply_patch_text
from pct_runtime.journal import Journal, PatchCapture, patch_diff, undo_patch
from tests.journal.helpers import make_record


def _apply(journal: Journal, cwd: Path, patch: str, session: str = "s-1") -> str:
    capture = PatchCapture(journal.blobs)
    apply_patch_text(patch, cwd, witness=capture)
    record = make_record("apply_patch", session=session, patch_files=capture.files())
    journal.record(record)
    return record.call_id


def _mode(path: Path) -> int:
    return stat.S_IMODE(os.stat(path).st_mode)


def test_undo_restores_bytes_and_mode_of_every_file(tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    (work / "script.sh").write_bytes(b"#!/bin/sh\r\necho one\r\n")
    os.chmod(work / "script.sh", 0o751)
    (work / "gone.txt").write_bytes(b"delete me\n")
    os.chmod(work / "gone.txt", 0o604)
    (work / "old.txt").write_bytes(b"moved\n")
    before = {p.name: (p.read_bytes(), _mode(p)) for p in work.iterdir()}
    patch = (
        "*** Begin Patch\n"
        "*** Update File: script.sh\n@@\n #!/bin/sh\n-echo one\n+echo two\n"
        "*** Delete File: gone.txt\n"
        "*** Add File: sub/new.txt\n+fresh\n"
        "*** Update File: old.txt\n*** Move to: renamed.txt\n"
        "*** End Patch"
    )
    with Journal.open(tmp_path / "agent") as journal:
        call_id = _apply(journal, work, patch)
        assert (work / "script.sh").read_bytes() == b"#!/bin/sh\r\necho two\r\n"
        outcome = undo_patch(journal, call_id)
        assert outcome.ok, outcome.message
        after = {p.name: (p.read_bytes(), _mode(p)) for p in work.iterdir() if p.is_file()}
        assert after == before
        assert not (work / "sub" / "new.txt").exists()
        original = journal.get(call_id)
        assert original is not None
        assert original.undone_by == outcome.undo_call_id
        assert not original.undoable
        undo = journal.get(outcome.undo_call_id or "")
        assert undo is not None
        assert undo.tool == "undo"
        assert undo.undo_of == call_id
        assert undo.undoable
        # The undo can be undone: the patch's result is back.
        redo = undo_patch(journal, undo.call_id)
        assert redo.ok, redo.message
        assert (work / "script.sh").read_bytes() == b"#!/bin/sh\r\necho two\r\n"
        assert (work / "sub" / "new.txt").read_bytes() == b"fresh\n"
        assert not (work / "gone.txt").exists()
        assert not list(work.rglob(".pct-apply-patch-*"))


def test_undo_refused_when_a_file_changed_after_the_patch(tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    (work / "a.txt").write_text("a\n")
    (work / "b.txt").write_text("b\n")
    patch = (
        "*** Begin Patch\n*** Update File: a.txt\n@@\n-a\n+A\n"
        "*** Update File: b.txt\n@@\n-b\n+B\n*** End Patch"
    )
    with Journal.open(tmp_path / "agent") as journal:
        call_id = _apply(journal, work, patch)
        (work / "b.txt").write_text("B edited by hand\n")
        outcome = undo_patch(journal, call_id)
        assert not outcome.ok
        assert outcome.changed_since == (str(work / "b.txt"),)
        assert str(work / "b.txt") in outcome.message
        assert "Nothing was changed" in outcome.message
        assert (work / "a.txt").read_text() == "A\n"
        assert (work / "b.txt").read_text() == "B edited by hand\n"
        record = journal.get(call_id)
        assert record is not None
        assert record.undone_by is None


def test_undo_refused_when_only_the_mode_changed(tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    (work / "a.txt").write_text("a\n")
    with Journal.open(tmp_path / "agent") as journal:
        call_id = _apply(
            journal, work, "*** Begin Patch\n*** Update File: a.txt\n@@\n-a\n+A\n*** End Patch"
        )
        os.chmod(work / "a.txt", 0o700)
        outcome = undo_patch(journal, call_id)
        assert not outcome.ok
        assert (work / "a.txt").read_text() == "A\n"


def test_undo_without_id_takes_the_sessions_last_patch_then_the_one_before(tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    (work / "a.txt").write_text("1\n")
    with Journal.open(tmp_path / "agent") as journal:
        _apply(journal, work, "*** Begin Patch\n*** Update File: a.txt\n@@\n-1\n+2\n*** End Patch")
        _apply(journal, work, "*** Begin Patch\n*** Update File: a.txt\n@@\n-2\n+3\n*** End Patch")
        assert undo_patch(journal, session="s-1").ok
        assert (work / "a.txt").read_text() == "2\n"
        assert undo_patch(journal, session="s-1").ok
        assert (work / "a.txt").read_text() == "1\n"
        last = undo_patch(journal, session="s-1")
        assert not last.ok
        assert "No patch to undo in session s-1" in last.message
        assert not undo_patch(journal, "c-0000000000").ok


def test_patch_diff_shows_before_and_after(tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    (work / "a.txt").write_text("keep\nold\n")
    with Journal.open(tmp_path / "agent") as journal:
        call_id = _apply(
            journal,
            work,
            "*** Begin Patch\n*** Update File: a.txt\n@@\n keep\n-old\n+new\n"
            "*** Add File: b.txt\n+born\n*** End Patch",
        )
        record = journal.get(call_id)
        assert record is not None
        diff = patch_diff(journal, record)
    assert "--- a/a.txt\n+++ b/a.txt\n" in diff  # relative to the patch's working directory
    assert str(work) not in diff
    assert "-old\n+new\n" in diff
    assert "--- /dev/null" in diff
    assert "+born\n" in diff


def test_pre_images_are_private_files(tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    (work / "a.txt").write_text("secret-ish\n")
    with Journal.open(tmp_path / "agent") as journal:
        call_id = _apply(journal, work, "*** Begin Patch\n*** Delete File: a.txt\n*** End Patch")
        record = journal.get(call_id)
        assert record is not None
        before = record.patch_files[0].before
        assert before is not None
        blob = journal.blobs.path_of(before.sha256)
        assert blob.read_bytes() == b"secret-ish\n"
        assert _mode(blob) == 0o600
        assert _mode(blob.parent.parent) == 0o700


def test_a_file_changed_while_the_undo_stages_is_not_overwritten(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import pct_runtime.journal.restore as restore_module

    work = tmp_path / "work"
    work.mkdir()
    (work / "a.txt").write_text("a\n")
    with Journal.open(tmp_path / "agent") as journal:
        call_id = _apply(
            journal, work, "*** Begin Patch\n*** Update File: a.txt\n@@\n-a\n+A\n*** End Patch"
        )
        real_write = os.write
        edited: list[bool] = []

        def write_then_edit(fd: int, data: bytes) -> int:
            written = real_write(fd, data)
            if not edited:  # someone saves the file while the undo stages its copy
                edited.append(True)
                (work / "a.txt").write_text("saved meanwhile\n")
            return written

        monkeypatch.setattr(restore_module.os, "write", write_then_edit)
        outcome = undo_patch(journal, call_id)
        monkeypatch.undo()
        assert not outcome.ok
        assert outcome.changed_since == (str(work / "a.txt"),)
        assert (work / "a.txt").read_text() == "saved meanwhile\n"
        assert not list(work.glob(".pct-apply-patch-*"))


def test_undo_waits_for_a_briefly_locked_journal(tmp_path: Path) -> None:
    import sqlite3
    import threading

    from pct_runtime.journal.store import db_path

    work = tmp_path / "work"
    work.mkdir()
    (work / "a.txt").write_text("a\n")
    with Journal.open(tmp_path / "agent") as journal:
        call_id = _apply(
            journal, work, "*** Begin Patch\n*** Update File: a.txt\n@@\n-a\n+A\n*** End Patch"
        )
        other = sqlite3.connect(
            db_path(tmp_path / "agent"), isolation_level=None, check_same_thread=False
        )
        other.execute("BEGIN IMMEDIATE")  # another runtime's writer holds the lock
        release = threading.Timer(0.4, lambda: other.execute("ROLLBACK"))
        release.start()
        try:
            outcome = undo_patch(journal, call_id)
        finally:
            release.join()
            other.close()
        assert outcome.ok
        assert outcome.undo_call_id is not None
        assert journal.get(outcome.undo_call_id) is not None
