"""`pct log` and `pct undo` over patches applied by `pct apply-patch` (transport "cli")."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from pct_runtime.cli_commands.errors import CliError
from pct_runtime.cli_commands.log_cmd import parse_since


def pct(
    agent: Path, *args: str, stdin: str = "", cwd: Path | None = None
) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PI_CODING_AGENT_DIR": str(agent)}
    return subprocess.run(
        [sys.executable, "-m", "pct_runtime.cli", *args],
        input=stdin,
        capture_output=True,
        text=True,
        env=env,
        cwd=cwd,
        timeout=60,
    )


@pytest.fixture
def dirs(tmp_path: Path) -> tuple[Path, Path]:
    agent, work = tmp_path / "agent", tmp_path / "work"
    agent.mkdir()
    work.mkdir()
    return agent, work


def patch_file(agent: Path, work: Path, body: str) -> subprocess.CompletedProcess[str]:
    return pct(
        agent, "apply-patch", "--cwd", str(work), stdin=f"*** Begin Patch\n{body}*** End Patch\n"
    )


def test_apply_patch_log_undo_and_redo(dirs: tuple[Path, Path]) -> None:
    agent, work = dirs
    target = work / "run.sh"
    target.write_bytes(b"#!/bin/sh\necho one\n")
    os.chmod(target, 0o750)
    done = patch_file(agent, work, "*** Update File: run.sh\n@@\n-echo one\n+echo two\n")
    assert done.returncode == 0, done.stderr
    assert target.read_bytes() == b"#!/bin/sh\necho two\n"

    log = pct(agent, "log")
    assert log.returncode == 0, log.stderr
    line = log.stdout.strip().splitlines()
    assert len(line) == 1
    for part in ("apply_patch", "update run.sh", "[undoable]"):
        assert part in line[0]
    row = json.loads(pct(agent, "log", "--json").stdout)
    assert row["transport"] == "cli"
    assert row["outcome"] == "ok"
    assert row["undoable"] is True
    assert row["patch_files"][0]["path"] == str(target)

    undo = pct(agent, "undo")
    assert undo.returncode == 0, undo.stderr
    assert f"Undid {row['call_id']}" in undo.stdout
    assert target.read_bytes() == b"#!/bin/sh\necho one\n"
    assert stat.S_IMODE(target.stat().st_mode) == 0o750

    again = pct(agent, "undo")
    assert again.returncode == 1
    assert "No patch to undo" in again.stderr

    rows = [json.loads(x) for x in pct(agent, "log", "--json").stdout.splitlines()]
    assert [r["tool"] for r in rows] == ["undo", "apply_patch"]
    assert rows[1]["undone_by"] == rows[0]["call_id"]
    redo = pct(agent, "undo", rows[0]["call_id"])
    assert redo.returncode == 0, redo.stderr
    assert target.read_bytes() == b"#!/bin/sh\necho two\n"


def test_undo_refused_when_the_file_changed_since(dirs: tuple[Path, Path]) -> None:
    agent, work = dirs
    assert patch_file(agent, work, "*** Add File: a.txt\n+one\n").returncode == 0
    (work / "a.txt").write_text("edited\n")
    refused = pct(agent, "undo")
    assert refused.returncode == 1
    assert str(work / "a.txt") in refused.stderr
    assert "Nothing was changed" in refused.stderr
    assert (work / "a.txt").read_text() == "edited\n"


def test_a_rejected_patch_is_logged_as_an_error(dirs: tuple[Path, Path]) -> None:
    agent, work = dirs
    bad = patch_file(agent, work, "*** Update File: missing.txt\n@@\n-a\n+b\n")
    assert bad.returncode == 1
    row = json.loads(pct(agent, "log", "--json", "--outcome", "error").stdout)
    assert row["tool"] == "apply_patch"
    assert row["error_code"]
    assert "does not exist" in row["result_text"]
    assert pct(agent, "log", "--outcome", "ok").stdout == ""


def test_log_filters_and_usage_errors(dirs: tuple[Path, Path]) -> None:
    agent, work = dirs
    assert pct(agent, "log").stdout == ""  # no journal yet: empty, exit 0
    assert patch_file(agent, work, "*** Add File: a.txt\n+x\n").returncode == 0
    assert pct(agent, "log", "--tool", "exec_command").stdout == ""
    assert pct(agent, "log", "--since", "10m").stdout.count("\n") == 1
    assert pct(agent, "log", "--since", "2000-01-01").stdout.count("\n") == 1
    bad = pct(agent, "log", "--since", "yesterday")
    assert bad.returncode == 2
    assert bad.stderr.startswith("pct: --since 'yesterday'")


def test_journal_switched_off_records_nothing(dirs: tuple[Path, Path]) -> None:
    agent, work = dirs
    config = agent / "extensions" / "pi-codex-toolkit.json"
    config.parent.mkdir()
    config.write_text(json.dumps({"pct": {"journal": {"enabled": False}}}))
    assert patch_file(agent, work, "*** Add File: a.txt\n+x\n").returncode == 0
    assert not (agent / "pct" / "journal.sqlite3").exists()


def test_parse_since() -> None:
    assert parse_since("90s", now=1000.0) == 910.0
    assert parse_since("2h", now=10_000.0) == 2800.0
    with pytest.raises(CliError):
        parse_since("soon")
