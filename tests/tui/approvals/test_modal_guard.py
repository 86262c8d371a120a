"""A fresh question ignores the keystrokes in flight for a short guard time (and says so),
and says `1 of N` (kept current as the queue grows) when several wait."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from textual.widgets import Label

from pct_runtime.host.ui import Question
from pct_tui.app import PctApp
from pct_tui.screens.approval import ConfirmScreen
from tests.tui.conftest import screen_lines, started, wait_for


async def test_a_key_in_flight_answers_nothing(
    agent_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(ConfirmScreen, "GUARD_SECONDS", 3.0)  # a loaded machine is slow
    app = PctApp(agent_dir=agent_dir, serve=False, watch=False)
    async with app.run_test(size=(80, 24)) as pilot:
        await started(app, pilot)
        first = asyncio.ensure_future(app.ui.confirm(Question("Computer Use access", "Safari?")))
        second = asyncio.ensure_future(app.ui.confirm(Question("Computer Use access", "Notes?")))
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmScreen), "modal")
        screen = app.screen
        assert screen.query("#question-guard")  # it says the keys wait
        assert str(screen.query_one("#queue-count", Label).render()) == "1 of 2 waiting"
        await pilot.press("y", "escape", "n")  # typed for the screen underneath
        assert not first.done()
        assert app.screen is screen
        await wait_for(pilot, lambda: not screen.query("#question-guard"), "armed")
        await pilot.press("y")
        assert await first is True
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmScreen), "second")
        await wait_for(pilot, lambda: not app.screen.query("#question-guard"), "armed")
        await pilot.press("n")
        assert await second is False


async def test_the_waiting_count_fits_the_title_at_80_columns(agent_dir: Path) -> None:
    app = PctApp(agent_dir=agent_dir, serve=False, watch=False, discover=False)
    async with app.run_test(size=(80, 24)) as pilot:
        await started(app, pilot)
        asks = [
            asyncio.ensure_future(app.ui.confirm(Question("Computer Use access", f"App {i}?")))
            for i in range(12)
        ]
        await wait_for(pilot, lambda: len(app.approvals) == 12, "twelve waiting")
        await pilot.pause()
        header = screen_lines(app)[0]
        assert "12 waiting" in header
        assert "sandbox:" in header  # the sandbox stays named
        for ask in asks:
            ask.cancel()
        await wait_for(pilot, lambda: not len(app.approvals), "withdrawn")
        assert screen_lines(app)[0].split()[1:4] == ["Pi", "Codex", "Toolkit"]
