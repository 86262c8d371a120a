"""The console names the sandbox in its header and shows it on the Status screen."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from textual.widgets import Header, Static

from pct_runtime.host.system.sandbox import SandboxSettings
from pct_tui.app import PctApp
from tests.tui.conftest import wait_for


@pytest.fixture
def root(agent_dir: Path) -> str:
    """The agent dir as the sandbox names it (symlinks resolved)."""
    return os.path.realpath(agent_dir)


async def test_header_and_status_show_the_mode(agent_dir: Path, root: str) -> None:
    app = PctApp(
        agent_dir=agent_dir,
        serve=False,
        watch=False,
        sandbox=SandboxSettings("workspace-write"),
        cwd=agent_dir,
    )
    # Wide enough that the roots line is not shortened in the middle (as long paths are).
    async with app.run_test(size=(300, 60)) as pilot:
        await wait_for(pilot, lambda: app.console_state.ready, "runtime start")
        await pilot.pause()
        assert app.screen.query_one(Header) is not None
        assert app.title == "Pi Codex Toolkit · sandbox: workspace-write, network off"
        status = str(app.screen.query_one("#status-text", Static).render())
        assert "Sandbox:\n  mode: workspace-write\n" in status
        assert f"  writable roots: {root}, " in status
        assert "  network: off" in status


async def test_full_access_is_named_too(agent_dir: Path) -> None:
    app = PctApp(agent_dir=agent_dir, serve=False, watch=False)
    assert app.title == "Pi Codex Toolkit · sandbox: danger-full-access (no sandbox)"


def test_bad_config_value_stops_pct_tui_before_the_terminal_is_taken(agent_dir: Path) -> None:
    (agent_dir / "extensions" / "pi-codex-toolkit.json").write_text(
        '{"pct": {"sandbox": {"network": "yes"}}}', encoding="utf-8"
    )
    done = subprocess.run(
        [sys.executable, "-m", "pct_tui", "--sandbox", "workspace-write"],
        capture_output=True,
        text=True,
        timeout=60,
        stdin=subprocess.DEVNULL,
        check=False,
    )
    assert done.returncode == 1
    assert "pct.sandbox.network must be true or false" in done.stderr
