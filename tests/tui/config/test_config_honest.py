"""The Config and Rules screens say only what holds now: `● modified` goes when an edit is
undone by hand, a message about an earlier save or reload goes at the next one, and a
config file that does not load is said before a save is tried."""

from __future__ import annotations

from pathlib import Path

from pct_tui.app import PctApp
from tests.tui.conftest import highlight, show, started, text, wait_for, write_config


async def test_an_edit_undone_by_hand_is_not_modified(agent_dir: Path) -> None:
    write_config(agent_dir, {})
    app = PctApp(agent_dir=agent_dir, serve=False, watch=False, discover=False)
    async with app.run_test(size=(80, 24)) as pilot:
        await started(app, pilot)
        await show(app, pilot, "2", "config")
        await highlight(app, pilot, "apply_patch")
        await pilot.press("enter")
        assert "● modified" in text(app, "#config-title")
        await pilot.press("enter")  # flipped back by hand
        assert "● modified" not in text(app, "#config-title")
        assert text(app, "#config-draft") == "No unsaved changes."
        assert app.unsaved_draft() is None  # q quits without asking
        await show(app, pilot, "3", "rules")
        await pilot.press("a", "escape")  # a rule added, then deleted
        await wait_for(pilot, lambda: app.current_mode == "rules" and app.screen.is_current)
        assert app.console_state.draft.dirty
        await pilot.press("delete")
        assert not app.console_state.draft.dirty
        assert "● modified" not in text(app, "#rules-title")


async def test_messages_go_at_the_next_reload(agent_dir: Path) -> None:
    write_config(agent_dir, {})
    app = PctApp(agent_dir=agent_dir, serve=False, watch=False, discover=False)
    async with app.run_test(size=(80, 24)) as pilot:
        await started(app, pilot)
        await show(app, pilot, "2", "config")
        await highlight(app, pilot, "apply_patch")
        await pilot.press("enter", "ctrl+s")
        await wait_for(pilot, lambda: "saved" in text(app, "#config-message"), "save")
        await pilot.press("ctrl+r")
        await wait_for(pilot, lambda: text(app, "#config-message") == "", "cleared by reload")
        await show(app, pilot, "3", "rules")
        await pilot.press("ctrl+s")
        await wait_for(pilot, lambda: text(app, "#rules-message") != "", "rules save")
        await show(app, pilot, "2", "config")
        await pilot.press("ctrl+r")
        await show(app, pilot, "3", "rules")
        assert text(app, "#rules-message") == ""


async def test_broken_json_is_said_on_the_config_screen(agent_dir: Path) -> None:
    path = agent_dir / "extensions" / "pi-codex-toolkit.json"
    path.write_text('{"applyPatch": {"enabled": true},,}\n')
    app = PctApp(agent_dir=agent_dir, serve=False, watch=False, discover=False)
    async with app.run_test(size=(80, 24)) as pilot:
        await started(app, pilot)
        await show(app, pilot, "2", "config")
        shown = text(app, "#config-load")
        assert "invalid-json (line 1 column" in shown
        assert app.screen.query_one("#config-load").display
        path.write_text('{"applyPatch": {"enabled": true}}\n')
        await pilot.press("ctrl+r")
        await wait_for(pilot, lambda: not app.screen.query_one("#config-load").display, "fixed")


async def test_the_rules_screen_warns_of_a_rule_nothing_reaches(agent_dir: Path) -> None:
    flags = {"patch": True, "shell": False, "code": False}
    rules = [{"id": "all", "match": "*", **flags}, {"id": "late", "match": "gpt-*", **flags}]
    write_config(agent_dir, {"execution": {"version": 1, "rules": rules}})
    app = PctApp(agent_dir=agent_dir, serve=False, watch=False, discover=False)
    async with app.run_test(size=(80, 24)) as pilot:
        await started(app, pilot)
        await show(app, pilot, "3", "rules")
        assert (
            "Rule 2 (late) is never reached: rule 1 (all, match *) matches every model first."
        ) in text(app, "#rules-notice")
        await pilot.press("down", "ctrl+up")  # the specific rule first: both reachable
        assert "never reached" not in text(app, "#rules-notice")
