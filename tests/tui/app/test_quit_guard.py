"""Pilot tests: nothing stale, no lost drafts, a cursor that stays on its job,
the core tools on the Config screen, and every screen usable at 80×24."""

from __future__ import annotations

import json
from pathlib import Path

from pct_tui.app import PctApp
from pct_tui.screens.quit_guard import QuitScreen
from tests.tui.conftest import highlight, show, started, text, wait_for, write_config


async def test_quit_asks_about_an_unsaved_draft(agent_dir: Path) -> None:
    path = write_config(agent_dir, {})
    app = PctApp(agent_dir=agent_dir, serve=False, watch=False)
    async with app.run_test(size=(160, 48)) as pilot:
        await started(app, pilot)
        await show(app, pilot, "2", "config")
        assert text(app, "#config-title") == "Configuration"
        await pilot.press("enter")  # Web Search on: a draft
        assert "● modified" in text(app, "#config-title")
        for key in ("q", "ctrl+c"):
            await pilot.press(key)
            await wait_for(pilot, lambda: isinstance(app.screen, QuitScreen), key)
            await pilot.press("escape")  # Cancel: still running, draft kept
            await wait_for(pilot, lambda: not isinstance(app.screen, QuitScreen), "cancel")
            assert app.is_running
            assert app.console_state.draft.dirty
        await pilot.press("ctrl+p")
        await pilot.pause()
        await pilot.press(*"Quit")
        await pilot.pause(0.3)
        await pilot.press("enter")
        await wait_for(pilot, lambda: isinstance(app.screen, QuitScreen), "palette quit")
        await pilot.press("s")  # Save and quit
        await wait_for(pilot, lambda: not app.is_running, "exit")
    assert json.loads(path.read_text())["webSearch"]["enabled"] is True


async def test_quit_discard_leaves_the_file_alone(agent_dir: Path) -> None:
    path = write_config(agent_dir, {})
    app = PctApp(agent_dir=agent_dir, serve=False, watch=False)
    async with app.run_test(size=(160, 48)) as pilot:
        await started(app, pilot)
        await show(app, pilot, "2", "config")
        await pilot.press("enter")
        await pilot.press("q")
        await wait_for(pilot, lambda: isinstance(app.screen, QuitScreen), "guard")
        await pilot.press("d")
        await wait_for(pilot, lambda: not app.is_running, "exit")
    assert json.loads(path.read_text()) == {}


async def test_quit_from_an_open_deferred_list_asks_and_save_keeps_its_ticks(
    agent_dir: Path,
) -> None:
    from textual.widgets import SelectionList

    from pct_tui.screens.deferred import DeferredScreen

    path = write_config(agent_dir, {})
    app = PctApp(agent_dir=agent_dir, serve=False, watch=False)
    async with app.run_test(size=(80, 24)) as pilot:
        await started(app, pilot)
        await show(app, pilot, "2", "config")
        await highlight(app, pilot, "deferred")
        await pilot.press("enter")
        await wait_for(pilot, lambda: isinstance(app.screen, DeferredScreen), "deferred")
        assert not app.console_state.draft.dirty
        app.screen.query_one("#deferred-list", SelectionList).select("apply_patch")
        await pilot.pause()
        assert "● modified" in text(app, "#question-title")
        await pilot.press("ctrl+q")
        await wait_for(pilot, lambda: isinstance(app.screen, QuitScreen), "guard")
        await pilot.press("s")
        await wait_for(pilot, lambda: not app.is_running, "exit")
    assert "apply_patch" in json.loads(path.read_text())["toolDiscovery"]["deferred"]
