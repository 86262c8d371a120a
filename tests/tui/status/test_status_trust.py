"""Pilot tests: nothing stale, no lost drafts, a cursor that stays on its job,
the core tools on the Config screen, and every screen usable at 80×24."""

from __future__ import annotations

from pathlib import Path

from pct_tui.app import PctApp
from tests.tui.conftest import show, started, text, wait_for, write_config


async def test_status_line_follows_saves_reloads_and_typos(agent_dir: Path) -> None:
    path = agent_dir / "extensions" / "pi-codex-toolkit.json"
    app = PctApp(agent_dir=agent_dir, serve=False, watch=False)
    async with app.run_test(size=(160, 48)) as pilot:
        await started(app, pilot)
        await pilot.pause()
        assert text(app, "#config-status") == (
            "Configuration loaded (no file yet: all-off defaults)."
        )
        await show(app, pilot, "2", "config")
        await pilot.press("enter", "ctrl+s")  # Web Search on, save: the file now exists
        await wait_for(pilot, lambda: path.exists(), "file")
        await show(app, pilot, "1", "status")
        assert text(app, "#config-status") == "Configuration loaded."
        path.write_text("{\n  broken\n}\n")
        await pilot.press("ctrl+r")
        await wait_for(pilot, lambda: app.runtime.config_error is not None, "broken reload")
        await pilot.pause()
        assert text(app, "#config-status") == (
            "Pi Codex Toolkit config error: invalid-json (line 2 column 3); using last known "
            "good settings."
        )
        assert app.screen.query_one("#config-status").has_class("error")
        write_config(agent_dir, {"applyPach": {"enabled": True}})
        await pilot.press("ctrl+r")
        await wait_for(pilot, lambda: app.runtime.config_error is None, "fixed reload")
        await pilot.pause()
        assert text(app, "#config-status") == (
            "Configuration loaded.\n"
            'Warning: unknown top-level key "applyPach" is ignored; did you mean applyPatch?'
        )
