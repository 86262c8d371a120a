"""The console starts, shows the config path and whether it loaded, and quits on q / ctrl+q."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.widgets import Static

from pct_tui.app import PctApp
from tests.tui.conftest import text, wait_for


@pytest.mark.parametrize("key", ["q", "ctrl+q"])
async def test_starts_shows_path_and_quits(agent_dir: Path, key: str) -> None:
    path = agent_dir / "extensions" / "pi-codex-toolkit.json"
    app = PctApp(agent_dir=agent_dir, serve=False, watch=False)
    async with app.run_test() as pilot:
        await wait_for(pilot, lambda: app.console_state.ready, "runtime start")
        await pilot.pause()
        assert text(app, "#config-path") == f"Config: {path}"
        assert text(app, "#config-status") == (
            "Configuration loaded (no file yet: all-off defaults)."
        )
        assert app.return_code is None  # still running
        await pilot.press(key)
        await wait_for(pilot, lambda: app.return_code == 0, "exit")
    assert not path.exists()


async def test_shows_the_read_error(agent_dir: Path) -> None:
    path = agent_dir / "extensions" / "pi-codex-toolkit.json"
    path.write_text('{"applyPatch":{"enabled":"yes"}}')
    app = PctApp(agent_dir=agent_dir, serve=False, watch=False)
    async with app.run_test() as pilot:
        await wait_for(pilot, lambda: app.console_state.ready, "runtime start")
        await pilot.pause()
        assert text(app, "#config-status") == (
            "Pi Codex Toolkit config error: invalid-config (applyPatch.enabled must be true or "
            "false); using all-off defaults."
        )
        assert app.screen.query_one("#config-status", Static).has_class("error")
        await pilot.press("q")


async def test_default_path_follows_the_agent_dir(agent_dir: Path) -> None:
    (agent_dir / "extensions" / "pi-codex-toolkit.json").write_text('{"debug": true}\n')
    app = PctApp(serve=False, watch=False)
    async with app.run_test() as pilot:
        await wait_for(pilot, lambda: app.console_state.ready, "runtime start")
        await pilot.pause()
        assert text(app, "#config-status") == "Configuration loaded."
        assert text(app, "#config-path") == (
            f"Config: {agent_dir}/extensions/pi-codex-toolkit.json"
        )
        await pilot.press("q")


async def test_debug_metadata_goes_to_the_event_bus_never_the_terminal(
    agent_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The console owns the terminal: with `debug: true`, records reach the bus only."""
    import io
    import sys

    from pct_runtime.debug import DEBUG_CHANNEL, DebugRecord

    (agent_dir / "extensions" / "pi-codex-toolkit.json").write_text('{"debug": true}')
    app = PctApp(agent_dir=agent_dir, serve=False, watch=False)
    async with app.run_test() as pilot:
        await wait_for(pilot, lambda: app.console_state.ready, "runtime start")
        seen: list[object] = []
        app.runtime.events.subscribe(DEBUG_CHANNEL, seen.append)
        terminal = io.StringIO()  # where a stderr-writing sink would land
        monkeypatch.setattr(sys, "stderr", terminal)
        app.runtime.debug.emit(DebugRecord(feature="image-generation", status=200))
        monkeypatch.undo()
        assert seen
        assert terminal.getvalue() == ""
        await pilot.press("q")
