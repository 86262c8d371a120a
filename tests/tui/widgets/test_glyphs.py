"""Pilot tests of issue 15: nothing stale, no lost drafts, a cursor that stays on its job,
the core tools on the Config screen, and every screen usable at 80×24."""

from __future__ import annotations

import json
from pathlib import Path

from textual.widgets import Label, OptionList, Static

from pct_tui.app import PctApp
from pct_tui.screens.rule_edit import RuleEditScreen
from pct_tui.widgets.fit_text import FitText
from tests.tui.conftest import wait_for

RULES = {
    "execution": {
        "version": 1,
        "rules": [{"id": "all", "match": "*", "patch": True, "shell": True, "code": False}],
    }
}


def write_config(agent_dir: Path, document: object) -> Path:
    path = agent_dir / "extensions" / "pi-codex-toolkit.json"
    path.write_text(json.dumps(document, indent=2) + "\n")
    return path


def text(app: PctApp, selector: str) -> str:
    widget = app.screen.query_one(selector)
    if isinstance(widget, FitText):
        return widget.source
    assert isinstance(widget, Static | Label)
    return str(widget.render())


async def started(app: PctApp, pilot: object) -> None:
    await wait_for(pilot, lambda: app.console_state.ready, "runtime start")  # type: ignore[arg-type]


async def show(app: PctApp, pilot: object, key: str, mode: str) -> None:
    await pilot.press(key)  # type: ignore[attr-defined]
    await wait_for(pilot, lambda: app.current_mode == mode, mode)  # type: ignore[arg-type]


async def highlight(app: PctApp, pilot: object, key: str) -> None:
    menu = app.screen.query_one("#config-menu", OptionList)
    menu.highlighted = menu.get_option_index(key)
    await pilot.pause()  # type: ignore[attr-defined]


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
