"""`pct log` never hands the terminal a control sequence the model wrote.

A summary is the model's command line, a client name is whatever the MCP client said.
They used to be printed raw, so `printf '\\x1b[2J…'` recorded in the journal cleared the
reader's screen, set the window title, or moved the cursor back to hide the rest of the
line. They are shown as visible escapes instead; `--json` stays exact.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.tui.history.journal_fill import call, record

SUMMARY = "printf '\x1b[2J\x1b]0;pwned\x07ok\rrm -rf ~ \u202eevil\x9b'"
CLIENT = "codex\x1b[8m"


def _pct_log(agent: Path, *args: str) -> str:
    env = {**os.environ, "PI_CODING_AGENT_DIR": str(agent)}
    done = subprocess.run(
        [sys.executable, "-m", "pct_runtime.cli", "log", *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_log_lines_show_control_characters_as_escapes(tmp_path: Path) -> None:
    agent = tmp_path / "agent"
    agent.mkdir()
    record(agent, call(summary=SUMMARY, client_name=CLIENT))
    out = _pct_log(agent)
    (line,) = out.splitlines()
    assert not any(ch in line for ch in "\x1b\x07\r\x9b\u202e"), repr(line)
    assert "printf '\\x1b[2J\\x1b]0;pwned\\x07ok\\x0drm -rf ~ \\u202eevil\\x9b'" in line
    assert "http/codex\\x1b[8m" in line

    (raw,) = _pct_log(agent, "--json").splitlines()
    assert json.loads(raw)["summary"] == SUMMARY


def test_undo_names_a_hostile_path_with_escapes(tmp_path: Path) -> None:
    """A patch may create any file name; `pct undo` names the files it touches."""
    agent, work = tmp_path / "agent", tmp_path / "work"
    agent.mkdir()
    work.mkdir()
    env = {**os.environ, "PI_CODING_AGENT_DIR": str(agent)}
    name = "notes\x1b]0;pwned\x07.md"
    patch = f"*** Begin Patch\n*** Add File: {name}\n+hi\n*** End Patch\n"
    cli = [sys.executable, "-m", "pct_runtime.cli"]
    applied = subprocess.run(
        [*cli, "apply-patch", "--cwd", str(work)],
        input=patch,
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )
    assert applied.returncode == 0, applied.stderr
    assert (work / name).exists()
    undone = subprocess.run([*cli, "undo"], capture_output=True, text=True, env=env, timeout=60)
    assert undone.returncode == 0, undone.stderr
    assert not (work / name).exists()
    assert "\x1b" not in undone.stdout + undone.stderr
    assert "notes\\x1b]0;pwned\\x07.md" in undone.stdout
