"""A journal SQLite cannot read, and a journal that is off: one line saying what, where and
what to do — never a traceback."""

from __future__ import annotations

from pathlib import Path

import pytest

from pct_runtime.journal import JournalWriter
from pct_runtime.journal.store import db_path
from tests.journal.helpers import PATCH, damage, make_record, run_pct


def _damaged_journal(tmp_path: Path) -> Path:
    agent = tmp_path / "agent"
    writer = JournalWriter(agent)
    try:
        for n in range(40):
            writer.submit(make_record(summary=f"echo {n} " + "x" * 500, result="y" * 500))
        assert writer.flush()
    finally:
        writer.close()
    damage(db_path(agent))
    return agent


@pytest.mark.parametrize("command", [["log"], ["log", "--json"], ["undo"], ["undo", "c-1"]])
def test_a_damaged_journal_is_one_line_and_exit_1(tmp_path: Path, command: list[str]) -> None:
    agent = _damaged_journal(tmp_path)
    done = run_pct(agent, *command)
    assert done.returncode == 1, done.stderr
    assert "Traceback" not in done.stderr
    path = db_path(agent)
    assert done.stderr == (
        f"pct: the journal {path} is damaged (database disk image is malformed); "
        f"move it aside (mv {path} {path}.damaged) and pct starts a new journal\n"
    )
    assert done.stdout == ""


def test_moving_a_damaged_journal_aside_starts_a_new_one(tmp_path: Path) -> None:
    agent = _damaged_journal(tmp_path)
    path = db_path(agent)
    path.rename(f"{path}.damaged")
    work = tmp_path / "work"
    work.mkdir()
    (work / "a.txt").write_text("one\n")
    assert run_pct(agent, "apply-patch", "--cwd", str(work), stdin=PATCH).returncode == 0
    log = run_pct(agent, "log")
    assert log.returncode == 0
    assert "apply_patch" in log.stdout


def test_a_journal_switched_off_says_so_in_log_and_undo(tmp_path: Path) -> None:
    agent = tmp_path / "agent"
    config = agent / "extensions" / "pi-codex-toolkit.json"
    config.parent.mkdir(parents=True)
    config.write_text('{"pct": {"journal": {"enabled": false}}}')
    log = run_pct(agent, "log")
    assert log.returncode == 0
    assert log.stderr == (
        f"pct: the journal is off: pct.journal.enabled is false in {config}; "
        "new calls are not recorded\n"
    )
    config.write_text('{"pct": {"journal": {"maxBytes": 5}}}')
    undo = run_pct(agent, "undo")
    assert undo.returncode == 1
    assert undo.stderr.splitlines()[0] == (
        "pct: the journal is off: pct.journal.maxBytes must be an integer of at least "
        f"1048576 in {config}; undo still uses the calls recorded before"
    )
