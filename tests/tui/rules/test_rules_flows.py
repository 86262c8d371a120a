"""Pilot tests of the console's flows, against the real embedded runtime.

Edit and save rules; a stale save keeps the draft; nested apply_patch approvals from a real
MCP client over the console's HTTP endpoint (Yes and No); stopping a shell job from the
sessions screen; the changed-on-disk banner.
"""

from __future__ import annotations

import json
from pathlib import Path

from textual.widgets import Checkbox, Input, Static

from pct_tui.app import PctApp
from pct_tui.screens.rule_edit import RuleEditScreen
from pct_tui.widgets.fit_text import FitText
from tests.tui.conftest import started, wait_for, write_config


def shown(app: PctApp, selector: str) -> str:
    widget = app.screen.query_one(selector, Static)
    return widget.source if isinstance(widget, FitText) else str(widget.render())


async def test_edit_and_save_rules(agent_dir: Path) -> None:
    path = write_config(agent_dir, {"execution": {"version": 1, "rules": []}})
    app = PctApp(agent_dir=agent_dir, serve=False, watch=False)
    async with app.run_test(size=(130, 40)) as pilot:
        await started(app, pilot)
        await pilot.press("3")
        await wait_for(pilot, lambda: app.current_mode == "rules")
        # add two rules with keys; the first opens its page at once
        await pilot.press("a")
        await wait_for(pilot, lambda: isinstance(app.screen, RuleEditScreen))
        page = app.screen
        page.query_one("#rule-id", Input).value = "astra"
        page.query_one("#rule-match", Input).value = "gpt-6-astra"
        page.query_one("#rule-patch", Checkbox).value = True
        page.query_one("#rule-code", Checkbox).value = True
        await pilot.click("#rule-done")
        await wait_for(pilot, lambda: not isinstance(app.screen, RuleEditScreen))
        await pilot.click("#rule-add")  # the mouse path
        await wait_for(pilot, lambda: isinstance(app.screen, RuleEditScreen))
        # a duplicate id is refused with the spec's message and the page stays open
        app.screen.query_one("#rule-id", Input).value = "astra"
        await pilot.press("ctrl+s")
        await pilot.pause()
        assert shown(app, "#rule-error") == 'Rule id "astra" is already used by another rule.'
        assert isinstance(app.screen, RuleEditScreen)
        app.screen.query_one("#rule-id", Input).value = "everything"
        app.screen.query_one("#rule-shell", Checkbox).value = True
        await pilot.press("ctrl+s")
        await wait_for(pilot, lambda: not isinstance(app.screen, RuleEditScreen))
        rules = app.console_state.draft.rules
        assert [(r.id, r.match, r.patch, r.shell, r.code) for r in rules] == [
            ("astra", "gpt-6-astra", True, False, True),
            ("everything", "*", False, True, False),
        ]
        # move the catch-all up with a key, then down again with the button
        await pilot.press("ctrl+up")
        assert [r.id for r in app.console_state.draft.rules] == ["everything", "astra"]
        await pilot.click("#rule-down")
        assert [r.id for r in app.console_state.draft.rules] == ["astra", "everything"]
        # nothing is written until Save
        assert json.loads(path.read_text())["execution"]["rules"] == []
        await pilot.click("#rules-save")
        await wait_for(pilot, lambda: "saved" in shown(app, "#rules-message"))
        assert shown(app, "#rules-message") == "Pi Codex Toolkit configuration saved."
        saved = json.loads(path.read_text())["execution"]["rules"]
        assert saved == [
            {"id": "astra", "match": "gpt-6-astra", "patch": True, "shell": False, "code": True},
            {"id": "everything", "match": "*", "patch": False, "shell": True, "code": False},
        ]
        # applied at once: the runtime uses the saved rules
        assert app.runtime.config.execution.rules[0].id == "astra"
        # delete the second rule with a key; the draft is dirty again
        await pilot.press("down", "x")
        assert [r.id for r in app.console_state.draft.rules] == ["astra"]
        assert app.console_state.draft.dirty


async def test_legacy_file_previews_the_migration_and_writes_nothing(agent_dir: Path) -> None:
    path = write_config(agent_dir, {"applyPatch": {"enabled": True}, "codeMode": {"enabled": True}})
    before = path.read_text()
    app = PctApp(agent_dir=agent_dir, serve=False, watch=False)
    async with app.run_test(size=(130, 40)) as pilot:
        await started(app, pilot)
        await pilot.press("3")
        await wait_for(pilot, lambda: app.current_mode == "rules")
        await pilot.pause()
        assert shown(app, "#rules-notice") == (
            "Save will store one catch-all rule migrated (P+C) and remove the legacy enabled "
            "flags. Code-only also starts the nested Shell backend."
        )
        assert [r.id for r in app.console_state.draft.rules] == ["migrated"]
        assert path.read_text() == before
        await pilot.press("ctrl+s")
        await wait_for(pilot, lambda: "saved" in shown(app, "#rules-message"))
        document = json.loads(path.read_text())
        assert "enabled" not in document["applyPatch"]
        assert document["execution"]["rules"][0]["match"] == "*"
