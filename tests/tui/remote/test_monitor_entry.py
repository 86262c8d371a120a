"""`pct-tui --help` documents --monitor, and the flag reaches the app read-only."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

import pct_tui.app as app_module


def test_help_documents_monitor() -> None:
    shown = subprocess.run(
        [sys.executable, "-c", "from pct_tui.app import main; main()", "--help"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert shown.returncode == 0, shown.stderr
    assert "--monitor" in shown.stdout
    assert "read-only" in shown.stdout


def test_monitor_flag_builds_a_read_only_console(
    agent_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    built: list[app_module.PctApp] = []

    def run(self: app_module.PctApp) -> None:
        built.append(self)

    monkeypatch.setattr(app_module.PctApp, "run", run)
    monkeypatch.setattr(sys, "argv", ["pct-tui", "--monitor"])
    app_module.main()
    (app,) = built
    assert app.serving is None
    assert app.remotes.role == "monitor"
    assert app.console_state.read_only
    assert app.title == "Pi Codex Toolkit · monitor (read-only)"
