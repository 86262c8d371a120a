"""Pilot tests: nothing stale, no lost drafts, a cursor that stays on its job,
the core tools on the Config screen, and every screen usable at 80×24."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.widgets._footer import FooterKey

from pct_tui.app import PctApp
from tests.tui.conftest import show, started


def visible(app: PctApp, selector: str) -> bool:
    """Drawn, not cut at the right, and starting above the footer (long text scrolls)."""
    widget = app.screen.query_one(selector)
    region = widget.region
    return (
        widget.display
        and region.width > 0
        and region.height > 0
        and region.right <= app.size.width
        and region.y < app.size.height - 1
    )


ESSENTIALS = {
    "status": ["#config-status", "#status-sessions", "#status-text"],
    "config": ["#config-menu", "#config-effect"],
    "rules": [
        "#rules-list",
        "#rule-add",
        "#rule-edit",
        "#rule-delete",
        "#rule-up",
        "#rule-down",
        "#rules-save",
        "#rules-preview",
    ],
    "sessions": ["#work-table", "#work-detail"],
    "events": ["#events-log"],
}


@pytest.mark.parametrize("size", [(80, 24), (160, 48)])
async def test_every_screen_keeps_its_controls_on_screen(
    agent_dir: Path, size: tuple[int, int]
) -> None:
    app = PctApp(agent_dir=agent_dir, serve=False, watch=False)
    async with app.run_test(size=size) as pilot:
        await started(app, pilot)
        for key, mode in zip("12345", ESSENTIALS, strict=True):
            await show(app, pilot, key, mode)
            await pilot.pause()
            for selector in ESSENTIALS[mode]:
                assert visible(app, selector), (mode, selector)
            keys = {k.key: k for k in app.screen.query(FooterKey)}
            for needed in ("question_mark", "q", "ctrl+r"):
                assert needed in keys, (mode, needed)
                assert keys[needed].region.right <= size[0], (mode, needed)
        await show(app, pilot, "3", "rules")
        assert app.screen.query_one("#rules-list").region.width >= 30
