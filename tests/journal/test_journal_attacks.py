"""Attacks on the journal: broken database files, bad `pct log` input, planted links, files
that moved or became links after a patch. Nothing a user owns is lost or changed, bad input
is refused with a clear message, and a broken journal never breaks a patch."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from pct_runtime.journal import Journal, JournalError, JournalWriter, undo_patch
from tests.journal.helpers import PATCH, make_record, run_pct


def _work(tmp_path: Path) -> Path:
    work = tmp_path / "work"
    work.mkdir()
    (work / "a.txt").write_text("one\n")
    return work


def _patched(tmp_path: Path) -> tuple[Path, Path]:
    """A patch applied through `pct apply-patch` (the journal's spool path)."""
    agent, work = tmp_path / "agent", _work(tmp_path)
    done = run_pct(agent, "apply-patch", "--cwd", str(work), stdin=PATCH)
    assert done.returncode == 0, done.stderr
    return agent, work


@pytest.mark.parametrize("since", ["", " ", "0001-01-01", "soon", "5"])
def test_pct_log_refuses_a_bad_since_with_exit_2(tmp_path: Path, since: str) -> None:
    done = run_pct(tmp_path / "agent", "log", "--since", since)
    assert done.returncode == 2
    assert "--since" in done.stderr
    assert done.stdout == ""


def test_the_first_cli_patch_is_logged_and_undone_before_any_database_exists(
    tmp_path: Path,
) -> None:
    agent, work = _patched(tmp_path)
    assert not (agent / "pct" / "journal.sqlite3").exists()  # only the spooled row
    log = run_pct(agent, "log")
    assert log.returncode == 0
    assert "apply_patch" in log.stdout
    assert "[undoable]" in log.stdout
    undo = run_pct(agent, "undo")
    assert undo.returncode == 0, undo.stderr
    assert (work / "a.txt").read_text() == "one\n"


@pytest.mark.parametrize("kind", ["fifo", "directory", "garbage"])
def test_a_broken_journal_file_is_named_and_never_breaks_a_patch(tmp_path: Path, kind: str) -> None:
    agent, work = tmp_path / "agent", _work(tmp_path)
    db = agent / "pct" / "journal.sqlite3"
    db.parent.mkdir(parents=True)
    if kind == "fifo":
        os.mkfifo(db)
    elif kind == "directory":
        db.mkdir()
    else:
        db.write_bytes(b"this is not a database, it is a note someone saved here\n" * 100)
    log = run_pct(agent, "log")
    assert log.returncode == 1
    assert str(db) in log.stderr
    assert "move it aside" in log.stderr
    patched = run_pct(agent, "apply-patch", "--cwd", str(work), stdin=PATCH)
    assert patched.returncode == 0, patched.stderr
    assert (work / "a.txt").read_text() == "two\n"
    undo = run_pct(agent, "undo")
    assert undo.returncode == 1
    assert "move it aside" in undo.stderr
    assert (work / "a.txt").read_text() == "two\n"
    if kind == "garbage":
        assert db.read_bytes().startswith(b"this is not a database")  # never overwritten


def test_a_runtime_writer_on_a_fifo_journal_reports_once_and_goes_on(tmp_path: Path) -> None:
    db = tmp_path / "pct" / "journal.sqlite3"
    db.parent.mkdir(parents=True)
    os.mkfifo(db)
    problems: list[str] = []
    writer = JournalWriter(tmp_path, report=problems.append)
    try:
        for _ in range(3):
            writer.submit(make_record())
        assert writer.flush(10)
    finally:
        writer.close()
    assert len(problems) == 1
    assert "not a regular file" in problems[0]
    assert stat.S_ISFIFO(os.stat(db).st_mode)


def test_a_hand_widened_journal_mode_is_made_private_again(tmp_path: Path) -> None:
    with Journal.open(tmp_path) as journal:
        journal.record(make_record())
    db = tmp_path / "pct" / "journal.sqlite3"
    os.chmod(db, 0o644)
    with Journal.open(tmp_path) as journal:
        journal.record(make_record())
        for name in (db, Path(f"{db}-wal"), Path(f"{db}-shm")):
            if name.exists():
                assert stat.S_IMODE(os.stat(name).st_mode) == 0o600, name


def test_an_unwritable_spool_is_reported_and_the_patch_applies(tmp_path: Path) -> None:
    agent, work = tmp_path / "agent", _work(tmp_path)
    (agent / "pct").mkdir(parents=True)
    (agent / "pct" / "journal-spool").write_text("a file where the folder goes")
    done = run_pct(agent, "apply-patch", "--cwd", str(work), stdin=PATCH)
    assert done.returncode == 0
    assert "pct journal:" in done.stderr
    assert (work / "a.txt").read_text() == "two\n"


def test_a_symlink_planted_for_a_blob_is_never_followed(tmp_path: Path) -> None:
    agent, work = _patched(tmp_path)
    secret = tmp_path / "secret.txt"
    secret.write_text("user data\n")
    with Journal.open(agent) as journal:
        journal.resolve_pending()
        (record,) = journal.query()
        before = record.patch_files[0].before
        assert before is not None
        blob = journal.blobs.path_of(before.sha256)
        blob.unlink()
        blob.symlink_to(secret)
        outcome = undo_patch(journal)
        assert not outcome.ok
        assert "no longer stored" in outcome.message
        assert (work / "a.txt").read_text() == "two\n"
        # Retention removes the link, never what it points at.
        os.utime(blob, (1, 1), follow_symlinks=False)
        journal.blobs.remove_unreferenced(set(), now=10**10)
        assert not os.path.lexists(blob)
    assert secret.read_text() == "user data\n"


def test_undo_of_a_hard_linked_file_leaves_the_other_name_alone(tmp_path: Path) -> None:
    """A patch replaces its file by rename, so the other name keeps the old content; undo
    renames the pre-image back the same way: the other name is never written through."""
    agent, work = tmp_path / "agent", _work(tmp_path)
    os.link(work / "a.txt", work / "twin.txt")
    assert run_pct(agent, "apply-patch", "--cwd", str(work), stdin=PATCH).returncode == 0
    assert (work / "twin.txt").read_text() == "one\n"
    (work / "twin.txt").write_text("twin edited\n")  # in place: the replaced inode
    undo = run_pct(agent, "undo")
    # The pre-image was copied, not linked (the inode had another name): still exact.
    assert undo.returncode == 0, undo.stderr
    assert (work / "a.txt").read_text() == "one\n"
    assert (work / "twin.txt").read_text() == "twin edited\n"


def test_undo_of_a_hard_linked_file_restores_by_rename(tmp_path: Path) -> None:
    agent, work = tmp_path / "agent", _work(tmp_path)
    os.link(work / "a.txt", work / "twin.txt")
    assert run_pct(agent, "apply-patch", "--cwd", str(work), stdin=PATCH).returncode == 0
    os.link(work / "a.txt", work / "twin2.txt")  # the patched content, linked again
    undo = run_pct(agent, "undo")
    assert undo.returncode == 0, undo.stderr
    assert (work / "a.txt").read_text() == "one\n"
    assert (work / "twin.txt").read_text() == "one\n"
    assert (work / "twin2.txt").read_text() == "two\n"  # not written through


def test_undo_refuses_when_a_patched_file_became_a_symlink(tmp_path: Path) -> None:
    agent, work = _patched(tmp_path)
    target = tmp_path / "elsewhere.txt"
    target.write_text("two\n")  # even the same bytes behind a link
    (work / "a.txt").unlink()
    (work / "a.txt").symlink_to(target)
    undo = run_pct(agent, "undo")
    assert undo.returncode == 1
    assert "a.txt" in undo.stderr
    assert (work / "a.txt").is_symlink()
    assert target.read_text() == "two\n"


def test_undo_refuses_after_the_patched_file_was_renamed(tmp_path: Path) -> None:
    agent, work = _patched(tmp_path)
    (work / "a.txt").rename(work / "b.txt")
    undo = run_pct(agent, "undo")
    assert undo.returncode == 1
    assert "a.txt" in undo.stderr
    assert "Nothing was changed" in undo.stderr
    assert not (work / "a.txt").exists()
    assert (work / "b.txt").read_text() == "two\n"


def test_journal_error_names_a_directory(tmp_path: Path) -> None:
    (tmp_path / "pct" / "journal.sqlite3").mkdir(parents=True)
    with pytest.raises(JournalError, match="is a directory"):
        Journal.open(tmp_path)


def test_tool_and_outcome_filters_use_an_index_also_on_an_older_journal(tmp_path: Path) -> None:
    """`pct log --tool`/`--outcome` on a 100k-row journal must not scan it (21 ms → 0.2 ms)."""
    import sqlite3

    with Journal.open(tmp_path) as journal:
        journal.record(make_record())
    db = sqlite3.connect(tmp_path / "pct" / "journal.sqlite3")
    db.execute("DROP INDEX calls_tool")
    db.execute("DROP INDEX calls_outcome")
    db.commit()
    db.close()
    Journal.open(tmp_path).close()  # the first opener adds them back
    db = sqlite3.connect(tmp_path / "pct" / "journal.sqlite3")
    try:
        for column in ("tool", "outcome"):
            plan = db.execute(
                f"EXPLAIN QUERY PLAN SELECT seq FROM calls WHERE {column} = ? "
                "ORDER BY seq DESC LIMIT 50",
                ["x"],
            ).fetchall()
            assert f"calls_{column}" in str(plan)
    finally:
        db.close()


def test_undo_waits_for_a_busy_journal_and_takes_back_the_spooled_newest_patch(
    tmp_path: Path,
) -> None:
    """A runtime's writer holding the lock must not make `pct undo` skip a spooled patch
    and take back an older one."""
    import sqlite3
    import threading

    from pct_runtime.capabilities.apply_patch.executor import apply_patch_text
    from pct_runtime.journal import PatchCapture

    agent, work = tmp_path / "agent", _work(tmp_path)
    (work / "old.txt").write_text("old one\n")
    with Journal.open(agent) as journal:  # an older patch, recorded by a runtime
        capture = PatchCapture(journal.blobs)
        apply_patch_text(
            "*** Begin Patch\n*** Update File: old.txt\n@@\n-old one\n+old two\n*** End Patch\n",
            work,
            witness=capture,
        )
        journal.record(make_record("apply_patch", patch_files=capture.files()))
    assert run_pct(agent, "apply-patch", "--cwd", str(work), stdin=PATCH).returncode == 0
    holder = sqlite3.connect(
        agent / "pct" / "journal.sqlite3", isolation_level=None, check_same_thread=False
    )
    holder.execute("BEGIN IMMEDIATE")
    release = threading.Timer(1.0, lambda: holder.execute("COMMIT"))
    release.start()
    try:
        with Journal.open(agent) as journal:
            outcome = undo_patch(journal)
    finally:
        release.join()
        holder.close()
    assert outcome.ok, outcome.message
    assert (work / "a.txt").read_text() == "one\n"
    assert (work / "old.txt").read_text() == "old two\n"


@pytest.mark.parametrize("planted", ["pending", "journal-blobs"])
def test_a_folder_link_planted_in_the_blob_store_is_never_written_through(
    tmp_path: Path, planted: str
) -> None:
    agent, work = tmp_path / "agent", _work(tmp_path)
    elsewhere = tmp_path / "users-folder"
    elsewhere.mkdir()
    blobs = agent / "pct" / "journal-blobs"
    link = blobs / "pending" if planted == "pending" else blobs
    link.parent.mkdir(parents=True, exist_ok=True)
    link.symlink_to(elsewhere, target_is_directory=True)
    done = run_pct(agent, "apply-patch", "--cwd", str(work), stdin=PATCH)
    assert done.returncode == 0
    assert "not a directory" in done.stderr
    assert (work / "a.txt").read_text() == "two\n"
    assert list(elsewhere.iterdir()) == []
    undo = run_pct(agent, "undo")
    assert undo.returncode == 1  # the patch was recorded, not made undoable
    assert (work / "a.txt").read_text() == "two\n"
    assert list(elsewhere.iterdir()) == []


def test_a_spool_folder_link_is_never_read_written_or_emptied(tmp_path: Path) -> None:
    agent, work = tmp_path / "agent", _work(tmp_path)
    users = tmp_path / "users-folder"
    users.mkdir()
    (users / "settings.json").write_text('{"mine": true}')
    (agent / "pct").mkdir(parents=True)
    (agent / "pct" / "journal-spool").symlink_to(users, target_is_directory=True)
    done = run_pct(agent, "apply-patch", "--cwd", str(work), stdin=PATCH)
    assert done.returncode == 0
    assert "not a directory" in done.stderr
    assert (work / "a.txt").read_text() == "two\n"
    assert run_pct(agent, "log").returncode == 0
    with Journal.open(agent) as journal:
        assert journal.ingest_spool() == 0
    assert sorted(p.name for p in users.iterdir()) == ["settings.json"]
    assert (users / "settings.json").read_text() == '{"mine": true}'


def test_a_huge_limit_means_every_row(tmp_path: Path) -> None:
    with Journal.open(tmp_path / "agent") as journal:
        journal.record(make_record())
    done = run_pct(tmp_path / "agent", "log", "--limit", str(10**20))
    assert done.returncode == 0, done.stderr
    assert len(done.stdout.splitlines()) == 1


@pytest.mark.parametrize("args", [[""], ["--session", " "]])
def test_pct_undo_refuses_an_empty_id_with_exit_2(tmp_path: Path, args: list[str]) -> None:
    agent, work = _patched(tmp_path)
    done = run_pct(agent, "undo", *args)
    assert done.returncode == 2
    assert "is empty" in done.stderr
    assert (work / "a.txt").read_text() == "two\n"
