"""Pilot tests: nothing stale, no lost drafts, a cursor that stays on its job,
the core tools on the Config screen, and every screen usable at 80×24."""

from __future__ import annotations

from pathlib import Path

from textual.widgets import OptionList

from pct_tui.app import PctApp
from pct_tui.screens.rule_edit import RuleEditScreen
from pct_tui.state.drafts import MIGRATE_EMPTY_NOTICE
from tests.tui.conftest import show, started, text, wait_for, write_config


async def test_rules_notice_follows_the_draft(agent_dir: Path) -> None:
    app = PctApp(agent_dir=agent_dir, serve=False, watch=False)
    async with app.run_test(size=(160, 48)) as pilot:
        await started(app, pilot)
        await show(app, pilot, "3", "rules")
        await pilot.pause()
        assert text(app, "#rules-notice").startswith(MIGRATE_EMPTY_NOTICE)
        await pilot.press("a")
        await wait_for(pilot, lambda: isinstance(app.screen, RuleEditScreen), "rule page")
        await pilot.press("ctrl+s")
        await wait_for(pilot, lambda: not isinstance(app.screen, RuleEditScreen), "done")
        assert text(app, "#rules-notice") == (
            "Save will store these 1 rule(s) and remove the legacy Apply Patch / Shell / Code "
            "switches."
        )
        assert "● modified" in text(app, "#rules-title")
        await pilot.press("ctrl+s")
        await wait_for(pilot, lambda: "saved" in text(app, "#rules-message"), "save")
        assert text(app, "#rules-notice") == ""
        assert "modified" not in text(app, "#rules-title")


async def test_looking_at_a_legacy_migration_is_not_a_draft(agent_dir: Path) -> None:
    write_config(agent_dir, {"applyPatch": {"enabled": True}})
    app = PctApp(agent_dir=agent_dir, serve=False, watch=False)
    async with app.run_test(size=(160, 48)) as pilot:
        await started(app, pilot)
        await show(app, pilot, "3", "rules")
        await show(app, pilot, "2", "config")
        menu = app.screen.query_one("#config-menu", OptionList)
        assert str(menu.get_option("apply_patch").prompt) == "Apply Patch: on"
        await pilot.press("q")
        await wait_for(pilot, lambda: not app.is_running, "exit without asking")
