"""The journal database: file modes, schema, round trip, filters, paging, retention."""

from __future__ import annotations

import os
import sqlite3
import stat
import time
from pathlib import Path

import pytest

from pct_runtime.journal import FileImage, Journal, JournalError, JournalQuery, PatchFile
from pct_runtime.journal.blobs import PENDING_GRACE_SECONDS
from pct_runtime.journal.store import SCHEMA_VERSION, db_path
from tests.journal.helpers import make_record


def test_open_creates_private_wal_database(tmp_path: Path) -> None:
    with Journal.open(tmp_path) as journal:
        journal.record(make_record())
        for suffix in ("-wal", "-shm"):  # SQLite gives them the database's mode
            side = db_path(tmp_path).with_name(db_path(tmp_path).name + suffix)
            assert stat.S_IMODE(os.stat(side).st_mode) == 0o600
    path = db_path(tmp_path)
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    assert stat.S_IMODE(os.stat(path.parent).st_mode) == 0o700
    db = sqlite3.connect(path)
    try:
        assert db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        assert db.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    finally:
        db.close()


def test_newer_schema_is_refused_with_the_reason(tmp_path: Path) -> None:
    Journal.open(tmp_path).close()
    db = sqlite3.connect(db_path(tmp_path))
    db.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    db.close()
    with pytest.raises(JournalError, match="newer pct"):
        Journal.open(tmp_path)


def test_round_trip_keeps_every_field(tmp_path: Path) -> None:
    files = (
        PatchFile("/w/a.txt", FileImage("a" * 64, 0o644), FileImage("b" * 64, 0o755)),
        PatchFile("/w/new.txt", None, FileImage("c" * 64, 0o600)),
    )
    original = make_record("apply_patch", patch_files=files, summary="update a.txt (10 bytes)")
    with Journal.open(tmp_path) as journal:
        seq = journal.record(original)
        got = journal.get(original.call_id)
    assert got is not None
    assert got.seq == seq
    assert got == original.__class__(**{**original.__dict__, "seq": seq})
    assert got.undoable


def test_query_filters_newest_first_and_pages(tmp_path: Path) -> None:
    now = time.time()
    with Journal.open(tmp_path) as journal:
        old = make_record(session="s-a", summary="ls old", when=now - 7200)
        journal.record(old)
        journal.record(make_record("apply_patch", session="s-a", outcome="error"))
        journal.record(make_record(session="s-b", summary="grep needle", result="found"))
        journal.record(make_record("exec", session="s-b", outcome="cancelled"))
        everything = journal.query()
        assert [r.seq for r in everything] == sorted((r.seq for r in everything), reverse=True)
        assert {r.session_id for r in journal.query(JournalQuery(session="s-a"))} == {"s-a"}
        assert [r.tool for r in journal.query(JournalQuery(tool="exec"))] == ["exec"]
        assert [r.outcome for r in journal.query(JournalQuery(outcome="error"))] == ["error"]
        assert [r.summary for r in journal.query(JournalQuery(text="NEEDLE"))] == ["grep needle"]
        assert old.call_id not in {r.call_id for r in journal.query(JournalQuery(since=now - 60))}
        page = journal.query(JournalQuery(limit=2))
        rest = journal.query(JournalQuery(before_seq=page[-1].seq))
        assert len(page) == 2
        assert [r.seq for r in page + rest] == [r.seq for r in everything]


def test_last_undoable_skips_failures_undone_calls_and_other_sessions(tmp_path: Path) -> None:
    image = FileImage("a" * 64, 0o644)
    files = (PatchFile("/w/a", image, FileImage("b" * 64, 0o644)),)
    with Journal.open(tmp_path) as journal:
        first = make_record("apply_patch", session="s-1", patch_files=files)
        journal.record(first)
        journal.record(make_record("apply_patch", session="s-1", outcome="error"))
        journal.record(make_record("apply_patch", session="s-2", patch_files=files))
        journal.record(make_record(session="s-1"))
        found = journal.last_undoable("s-1")
        assert found is not None
        assert found.call_id == first.call_id
        assert journal.last_undoable("s-9") is None


def test_prune_by_age_removes_calls_and_only_their_unshared_blobs(tmp_path: Path) -> None:
    now = time.time()
    with Journal.open(tmp_path) as journal:
        shared = journal.blobs.put(b"shared")
        only_old = journal.blobs.put(b"only old")
        old_files = (PatchFile("/w/a", FileImage(shared, 0o644), FileImage(only_old, 0o644)),)
        new_files = (PatchFile("/w/b", FileImage(shared, 0o644), None),)
        old = make_record("apply_patch", patch_files=old_files, when=now - 40 * 86400)
        new = make_record("apply_patch", patch_files=new_files, when=now)
        journal.record(old)
        journal.record(new)
        # Blobs younger than the grace period are kept (their call may not be recorded yet).
        for digest in (shared, only_old):
            os.utime(journal.blobs.path_of(digest), (now - 7200, now - 7200))
        assert journal.prune(max_bytes=10**9, max_age_days=30, now=now) == 1
        assert journal.get(old.call_id) is None
        assert journal.get(new.call_id) is not None
        assert journal.blobs.exists(shared)
        assert not journal.blobs.exists(only_old)


def test_prune_by_size_drops_oldest_first(tmp_path: Path) -> None:
    with Journal.open(tmp_path) as journal:
        ids = []
        for index in range(300):
            record = make_record(summary=f"call {index}", result="x" * 4000)
            journal.record(record)
            ids.append(record.call_id)
        before = journal.used_bytes()
        journal.prune(max_bytes=before // 2, max_age_days=30)
        assert journal.used_bytes() <= before // 2
        kept = {r.call_id for r in journal.query(JournalQuery(limit=1000))}
        assert ids[-1] in kept
        assert ids[0] not in kept
        assert kept == set(ids[len(ids) - len(kept) :])


def test_prune_removes_images_a_dead_writer_left_pending(tmp_path: Path) -> None:
    source = tmp_path / "file.txt"
    source.write_text("content\n")
    now = time.time()
    with Journal.open(tmp_path) as journal:
        stale, _ = journal.blobs.link_pending(str(source))  # links: each its own inode
        os.utime(stale, (now - 7200, now - 7200))  # the user's file was last written then
        # Just linked, whatever the file's mtime: a writer may be about to name it.
        journal.prune(max_bytes=10**9, max_age_days=30, now=now)
        assert os.path.exists(stale)
        # A dead writer's: linked longer ago than the grace period.
        journal.prune(max_bytes=10**9, max_age_days=30, now=now + PENDING_GRACE_SECONDS + 1)
        assert not os.path.exists(stale)
    assert source.read_text() == "content\n"


def test_sessions_and_tools_most_recent_first(tmp_path: Path) -> None:
    with Journal.open(tmp_path) as journal:
        journal.record(make_record("exec_command", session="s-old"))
        journal.record(make_record("apply_patch", session="s-new"))
        journal.record(make_record("exec_command", session=None))
        assert journal.sessions() == ["s-new", "s-old"]
        assert journal.tools() == ["exec_command", "apply_patch"]


def test_open_waits_while_another_process_creates_the_journal(tmp_path: Path) -> None:
    import threading

    (tmp_path / "pct").mkdir(mode=0o700)
    other = sqlite3.connect(db_path(tmp_path), isolation_level=None, check_same_thread=False)
    other.execute("BEGIN EXCLUSIVE")  # the creator holds the file while it sets it up
    release = threading.Timer(0.5, lambda: other.execute("ROLLBACK"))
    release.start()
    try:
        with Journal.open(tmp_path) as journal:
            journal.record(make_record())
    finally:
        release.join()
        other.close()
