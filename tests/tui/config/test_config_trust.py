"""Pilot tests: nothing stale, no lost drafts, a cursor that stays on its job,
the core tools on the Config screen, and every screen usable at 80×24."""

from __future__ import annotations

import json
from pathlib import Path

from textual.widgets import OptionList, Static

from pct_tui.app import PctApp
from tests.tui.conftest import highlight, show, started, text, wait_for, write_config

RULES = {
    "execution": {
        "version": 1,
        "rules": [{"id": "all", "match": "*", "patch": True, "shell": True, "code": False}],
    }
}


async def test_core_tools_switch_on_from_config_and_rules_say_when_no_model(
    agent_dir: Path,
) -> None:
    path = write_config(agent_dir, {})
    app = PctApp(agent_dir=agent_dir, serve=False, watch=False)
    async with app.run_test(size=(160, 48)) as pilot:
        await started(app, pilot)
        await show(app, pilot, "2", "config")
        await highlight(app, pilot, "apply_patch")
        await pilot.press("enter")
        menu = app.screen.query_one("#config-menu", OptionList)
        assert str(menu.get_option("apply_patch").prompt) == "Apply Patch: on"
        await pilot.press("ctrl+s")
        await wait_for(pilot, lambda: "saved" in text(app, "#config-message"), "save")
        assert json.loads(path.read_text())["applyPatch"] == {"enabled": True}
        await show(app, pilot, "1", "status")
        assert text(app, "#status-tools") == "MCP tools: apply_patch"
        # a file with rules: the item points at the rules page, and no model is explained
        write_config(agent_dir, RULES)
        await pilot.press("ctrl+r")
        await wait_for(pilot, lambda: app.runtime.config.execution is not None, "reload")
        await wait_for(pilot, lambda: "No current model" in text(app, "#status-text"), "text")
        assert "no current model" in text(app, "#status-tools")
        assert "  reason: current-model-missing" in text(app, "#status-text")
        await show(app, pilot, "2", "config")
        await highlight(app, pilot, "shell_sessions")
        menu = app.screen.query_one("#config-menu", OptionList)
        prompt = str(menu.get_option("shell_sessions").prompt)
        assert prompt == "Shell Sessions: by execution rules (opens Rules)"
        assert "pct-tui --model" in str(app.screen.query_one("#config-effect", Static).render())
        await pilot.press("enter")
        await wait_for(pilot, lambda: app.current_mode == "rules", "rules")
        assert "No current model, so no execution rule can match" in text(app, "#rules-preview")
        assert "settings.json" in text(app, "#rules-preview")
