"""`pct apply-patch` spools its row and leaves its file images unhashed (`pending:`); whoever
opens the journal next inserts the row and names the images, and undo, diff and retention
treat them as the images they are."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from pct_runtime.journal import Journal, JournalQuery, JournalWriter, patch_diff, undo_patch
from pct_runtime.journal.blobs import LOST, PENDING_PREFIX
from tests.journal.helpers import sign_row

PATCH = "*** Begin Patch\n*** Update File: a.txt\n@@\n-one\n+two\n*** End Patch\n"


def _cli_patch(agent: Path, work: Path, patch: str = PATCH) -> None:
    env = {**os.environ, "PI_CODING_AGENT_DIR": str(agent)}
    done = subprocess.run(
        [sys.executable, "-m", "pct_runtime.cli", "apply-patch", "--cwd", str(work)],
        input=patch.encode(),
        capture_output=True,
        env=env,
        check=False,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr


def _images(journal: Journal) -> list[str]:
    (record,) = journal.query(JournalQuery(tool="apply_patch"))
    return [
        image.sha256
        for item in record.patch_files
        for image in (item.before, item.after)
        if image is not None
    ]


def _setup(tmp_path: Path) -> tuple[Path, Path]:
    work = tmp_path / "work"
    work.mkdir()
    (work / "a.txt").write_bytes(b"one\n")
    os.chmod(work / "a.txt", 0o640)
    return tmp_path / "agent", work


def test_cli_patch_rows_are_pending_and_undo_names_them_first(tmp_path: Path) -> None:
    agent, work = _setup(tmp_path)
    _cli_patch(agent, work)
    assert (work / "a.txt").read_bytes() == b"two\n"
    with Journal.open(agent) as journal:
        assert all(image.startswith(PENDING_PREFIX) for image in _images(journal))
        outcome = undo_patch(journal)
        assert outcome.ok, outcome.message
        assert all(not image.startswith(PENDING_PREFIX) for image in _images(journal))
        assert not list(journal.blobs.pending_dir.iterdir())  # adopted, names removed
    assert (work / "a.txt").read_bytes() == b"one\n"
    assert os.stat(work / "a.txt").st_mode & 0o777 == 0o640


def test_diff_of_a_pending_patch_shows_its_content(tmp_path: Path) -> None:
    agent, work = _setup(tmp_path)
    _cli_patch(agent, work)
    with Journal.open(agent) as journal:
        (record,) = journal.query(JournalQuery(tool="apply_patch"))
        diff = patch_diff(journal, record)
    assert "-one\n+two\n" in diff


def test_a_file_written_in_place_before_resolution_is_refused_not_restored(
    tmp_path: Path,
) -> None:
    """The post-image link shares the live inode: an in-place edit makes it `lost`, so the
    undo refuses (the file changed since) instead of trusting a changed image."""
    agent, work = _setup(tmp_path)
    _cli_patch(agent, work)
    with open(work / "a.txt", "ab") as handle:  # same inode, other size
        handle.write(b"user edit\n")
    with Journal.open(agent) as journal:
        outcome = undo_patch(journal)
        assert not outcome.ok
        assert "a.txt" in outcome.message
        assert LOST in _images(journal)
    assert (work / "a.txt").read_bytes() == b"two\nuser edit\n"


def test_the_next_writer_and_the_pruner_resolve_and_keep_pending_images(tmp_path: Path) -> None:
    agent, work = _setup(tmp_path)
    _cli_patch(agent, work)
    with Journal.open(agent) as journal:
        pending = list(journal.blobs.pending_dir.iterdir())
        assert len(pending) == 2
        # Far in the future: past every grace period; the images are still referenced.
        journal.blobs.remove_unreferenced(
            {p.name for p in pending}, now=os.path.getmtime(pending[0]) + 10**6
        )
        assert all(p.exists() for p in pending)
    writer = JournalWriter(agent)
    try:
        writer.prune_soon()  # a runtime's writer thread: retention resolves first
        assert writer.flush(10)
    finally:
        writer.close()
    with Journal.open(agent) as journal:
        images = _images(journal)
        assert all(len(image) == 64 for image in images)
        assert all(journal.blobs.exists(image) for image in images)
        assert undo_patch(journal).ok
    assert (work / "a.txt").read_bytes() == b"one\n"


def test_two_processes_resolving_at_once_agree(tmp_path: Path) -> None:
    agent, work = _setup(tmp_path)
    _cli_patch(agent, work)
    journals = [Journal.open(agent), Journal.open(agent)]
    try:
        errors: list[BaseException] = []

        def resolve(journal: Journal) -> None:
            try:
                journal.resolve_pending()
            except BaseException as exc:  # pragma: no cover - reported below
                errors.append(exc)

        threads = [threading.Thread(target=resolve, args=(j,)) for j in journals]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(30)
        assert not errors
        images = _images(journals[0])
        assert LOST not in images
        assert all(journals[0].blobs.exists(image) for image in images)
    finally:
        for journal in journals:
            journal.close()


def test_one_shot_spools_without_sqlite_or_a_thread(tmp_path: Path) -> None:
    """The spool is what keeps `pct apply-patch` within its benchmark goal."""
    probe = (
        "import sys, threading; from pathlib import Path; "
        "from pct_runtime.journal.oneshot import OneShotTrace; "
        f"t = OneShotTrace.start(Path({str(tmp_path / 'agent')!r}), 'apply_patch', "
        "{'patch': 'x'}); "
        "t.finish(outcome='error', error_code='approval-denied', "
        "text='token=sk-abcdefghijklmnopqrstu'); "
        "print(sorted(m for m in ('sqlite3', 'hashlib', 'pct_runtime.journal.records', "
        "'pct_runtime.journal.store') if m in sys.modules), threading.active_count())"
    )
    out = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True, timeout=60
    ).stdout.split()
    assert out == ["[]", "1"]
    spooled = list((tmp_path / "agent" / "pct" / "journal-spool").iterdir())
    assert len(spooled) == 1
    assert oct(spooled[0].stat().st_mode & 0o777) == "0o600"
    assert b"sk-abcdefghij" not in spooled[0].read_bytes()
    assert json.loads(spooled[0].read_bytes())["mac"]  # signed (the key is made on first need)
    key = tmp_path / "agent" / "pct" / "journal-spool.key"
    assert oct(key.stat().st_mode & 0o777) == "0o600"
    with Journal.open(tmp_path / "agent") as journal:
        (record,) = journal.query(JournalQuery())
    assert not spooled[0].exists()
    assert record.outcome == "denied"
    assert record.transport == "cli"
    assert "<redacted>" in record.result_text


def test_a_broken_spool_file_is_quarantined_and_the_others_inserted(tmp_path: Path) -> None:
    agent, work = _setup(tmp_path)
    _cli_patch(agent, work)
    folder = agent / "pct" / "journal-spool"
    (folder / "c-0000000001.json").write_text("{not json")
    (folder / "c-0000000002.json").write_text('{"v": 99}')
    (folder / "c-0000000003.json").mkdir()
    with Journal.open(agent) as journal:
        records = journal.query(JournalQuery())
        assert [r.tool for r in records] == ["journal-check", "apply_patch"]
        assert journal.ingest_spool() == 0
        (notice,) = journal.take_notices()
    assert notice.startswith("3 spooled journal rows failed their check and were quarantined")
    assert "c-0000000001.json (unparsable)" in notice
    assert "c-0000000002.json (no authenticator)" in notice
    assert "c-0000000003.json (not a regular file)" in notice
    assert sorted(p.name for p in folder.iterdir()) == ["quarantine"]
    assert len(list((folder / "quarantine").iterdir())) == 3


def test_a_spooled_row_is_inserted_once_by_racing_readers(tmp_path: Path) -> None:
    agent, work = _setup(tmp_path)
    _cli_patch(agent, work)
    journals = [Journal.open(agent)]
    try:
        # The first open ingested it; a copy put back (a reader that listed it before the
        # unlink) is recognised by its call id.
        (record,) = journals[0].query(JournalQuery())
        folder = agent / "pct" / "journal-spool"
        folder.mkdir(exist_ok=True)
        row = {
            "v": 1,
            "call_id": record.call_id,
            "time": 1,
            "tool": "apply_patch",
            "transport": "cli",
            "summary": "s",
            "outcome": "ok",
            "error_code": None,
            "duration_ms": 1,
            "result_text": "r",
            "patch_files": [],
        }
        (folder / f"{record.call_id}.json").write_text(json.dumps(sign_row(agent, row)))
        assert journals[0].ingest_spool() == 0
        assert len(journals[0].query(JournalQuery())) == 1
    finally:
        for journal in journals:
            journal.close()


def test_a_cli_only_machine_drains_its_spool_every_drain_at_rows(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With no runtime, `pct log` or `pct undo` ever run, the spool and its unhashed images
    must not grow forever: the row that fills the spool inserts it and applies retention."""
    from pct_runtime.journal import oneshot

    monkeypatch.setattr(oneshot, "DRAIN_AT", 3)
    agent, work = _setup(tmp_path)
    folder = agent / "pct" / "journal-spool"
    for n in range(3):
        trace = oneshot.OneShotTrace.start(agent, "apply_patch", {"patch": PATCH})
        assert trace is not None
        (work / "a.txt.edit").write_text(f"v{n}\n")  # saved as editors do (a new inode)
        os.replace(work / "a.txt.edit", work / "a.txt")
        trace.patch_witness.before_commit([str(work / "a.txt")], os.path.realpath(work))
        (work / "a.txt.new").write_text(f"w{n}\n")
        os.replace(work / "a.txt.new", work / "a.txt")
        trace.patch_witness.after_commit()
        trace.finish(outcome="ok", text="done")
        assert len(list(folder.iterdir())) == (0 if n == 2 else n + 1)
    with Journal.open(agent) as journal:
        records = journal.query(JournalQuery())
        assert len(records) == 3
        images = [
            image.sha256
            for record in records
            for item in record.patch_files
            for image in (item.before, item.after)
            if image is not None
        ]
        assert len(images) == 6
        assert all(journal.blobs.exists(image) for image in images)
    assert not list((agent / "pct" / "journal-blobs" / "pending").iterdir())
