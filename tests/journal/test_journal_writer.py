"""The writer: off the caller's thread, never raising, problems reported once."""

from __future__ import annotations

import sqlite3
import threading
from pathlib import Path

from pct_runtime.journal import Journal, JournalQuery, JournalSettings, JournalWriter
from pct_runtime.journal.store import db_path
from tests.journal.helpers import make_record


def test_submit_returns_at_once_and_the_row_arrives(tmp_path: Path) -> None:
    writer = JournalWriter(tmp_path)
    record = make_record()
    try:
        writer.submit(record)
        assert writer.flush()
    finally:
        writer.close()
    with Journal.open(tmp_path) as journal:
        assert journal.get(record.call_id) is not None


def test_disabled_writer_writes_nothing(tmp_path: Path) -> None:
    writer = JournalWriter(tmp_path, JournalSettings(enabled=False))
    writer.submit(make_record())
    assert writer.flush()
    writer.close()
    assert not db_path(tmp_path).exists()
    assert writer.patch_capture() is None


def test_locked_database_drops_the_record_and_reports_once(tmp_path: Path) -> None:
    Journal.open(tmp_path).close()
    reports: list[str] = []
    writer = JournalWriter(tmp_path, report=reports.append)
    blocker = sqlite3.connect(db_path(tmp_path), isolation_level=None)
    blocker.execute("BEGIN IMMEDIATE")  # another process holds the write lock
    try:
        for _ in range(3):
            writer.submit(make_record())
        assert writer.flush(timeout=20)
    finally:
        blocker.execute("ROLLBACK")
        blocker.close()
    try:
        assert writer.dropped == 3
        assert len(reports) == 1
        assert "locked" in reports[0]
        writer.submit(make_record())  # the lock is gone: writing resumes
        assert writer.flush()
        assert writer.written == 1
    finally:
        writer.close()


def test_unopenable_journal_reports_once_and_calls_go_on(tmp_path: Path) -> None:
    (tmp_path / "pct").write_text("a file where the folder should be")
    reports: list[str] = []
    writer = JournalWriter(tmp_path, report=reports.append)
    try:
        for _ in range(5):
            writer.submit(make_record())
        assert writer.flush()
    finally:
        writer.close()
    assert len(reports) == 1
    assert "cannot be opened" in reports[0]


def test_full_queue_drops_without_blocking(tmp_path: Path) -> None:
    reports: list[str] = []
    writer = JournalWriter(tmp_path, report=reports.append, queue_size=2)
    gate = threading.Event()
    writing = threading.Event()
    original = writer._write

    def slow_write(journal: Journal, record: object) -> None:
        writing.set()
        gate.wait(10)
        original(journal, record)  # type: ignore[arg-type]

    writer._write = slow_write  # type: ignore[method-assign]
    try:
        writer.submit(make_record())
        # Once the thread is stuck in a write it takes nothing more: the queue holds 2.
        assert writing.wait(10)
        for _ in range(19):
            writer.submit(make_record())
        assert writer.dropped == 17
        assert len(reports) == 1
        assert "fell behind" in reports[0]
    finally:
        gate.set()
        writer.flush()
        writer.close()
    with Journal.open(tmp_path) as journal:
        assert 1 <= len(journal.query(JournalQuery())) <= 3


def test_drain_writes_the_queue_when_the_thread_never_runs(tmp_path: Path) -> None:
    """At SIGTERM the low-priority writer thread may not get the CPU before the SIGKILL:
    `drain` writes on the caller's thread. Here the thread exists but never starts."""
    writer = JournalWriter(tmp_path)
    parked = threading.Thread(target=lambda: None)
    writer._thread = parked  # what `submit` would start; it stays parked
    records = [make_record(summary=f"echo {n}") for n in range(3)]
    for record in records:
        writer.submit(record)
    assert not db_path(tmp_path).exists()  # nothing ran yet
    assert writer.drain()
    with Journal.open(tmp_path) as journal:
        rows = journal.query(JournalQuery(limit=10))
    assert [r.call_id for r in reversed(rows)] == [r.call_id for r in records]
    writer._thread = None
    writer.close()
