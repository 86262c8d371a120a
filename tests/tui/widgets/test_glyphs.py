"""Pilot tests: nothing stale, no lost drafts, a cursor that stays on its job,
the core tools on the Config screen, and every screen usable at 80×24."""

from __future__ import annotations

from pathlib import Path

from pct_tui.app import PctApp
from pct_tui.screens.rule_edit import RuleEditScreen
from tests.tui.conftest import highlight, show, started, wait_for, write_config

RULES = {
    "execution": {
        "version": 1,
        "rules": [{"id": "all", "match": "*", "patch": True, "shell": True, "code": False}],
    }
}


async def test_check_boxes_show_their_state_by_glyph(agent_dir: Path) -> None:
    write_config(agent_dir, RULES)
    app = PctApp(agent_dir=agent_dir, serve=False, watch=False)
    async with app.run_test(size=(80, 24)) as pilot:
        await started(app, pilot)
        await show(app, pilot, "3", "rules")
        await pilot.press("e")
        await wait_for(pilot, lambda: isinstance(app.screen, RuleEditScreen), "rule page")
        await pilot.pause()

        def box(selector: str) -> str:
            return str(app.screen.query_one(selector).render())

        assert box("#rule-patch").startswith("▐X▌")  # on
        assert box("#rule-code").startswith("▐ ▌")  # off: no X, whatever the colours
        await pilot.press("escape")
        await show(app, pilot, "2", "config")
        await highlight(app, pilot, "deferred")
        await pilot.press("enter")
        from pct_tui.screens.deferred import DeferredScreen

        await wait_for(pilot, lambda: isinstance(app.screen, DeferredScreen), "deferred")
        await pilot.pause()
        names = app.screen.query_one("#deferred-list")
        lines = [names.render_line(y).text for y in range(names.size.height)]
        chosen = set(app.console_state.draft.config.tool_discovery.deferred)
        glyphs = {line[4:].strip(): line[1] for line in lines if line[4:].strip()}
        assert {"X", " "} <= set(glyphs.values())
        for name, glyph in glyphs.items():
            assert glyph == ("X" if name in chosen else " "), name
