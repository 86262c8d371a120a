"""Pilot tests: nothing stale, no lost drafts, a cursor that stays on its job,
the core tools on the Config screen, and every screen usable at 80×24."""

from __future__ import annotations

from pathlib import Path

from textual.widgets import DataTable

from pct_tui.app import PctApp
from pct_tui.screens.approval import ConfirmScreen
from tests.tui.conftest import show, started, text, wait_for, write_config


async def test_sessions_cursor_stays_on_its_job_when_rows_are_inserted_above(
    agent_dir: Path, tmp_path: Path
) -> None:
    write_config(agent_dir, {"shellSessions": {"enabled": True}})
    app = PctApp(agent_dir=agent_dir, serve=False, watch=False, cwd=tmp_path)
    async with app.run_test(size=(160, 48)) as pilot:
        await started(app, pilot)
        first = await app.runtime.open_session("mcp", session_id="pct-session-a")
        second = await app.runtime.open_session("mcp", session_id="pct-session-b")
        chosen = await second.call("exec_command", {"cmd": "sleep 60", "yield_time_ms": 100})
        chosen_id = chosen.details["session_id"]
        await show(app, pilot, "4", "sessions")
        table = app.screen.query_one("#work-table", DataTable)
        await wait_for(pilot, lambda: table.row_count == 3, "rows")
        await pilot.press("down", "down")
        assert str(table.get_row_at(table.cursor_row)[0]).strip() == chosen_id
        # a job of the first session is inserted above the cursor
        other = await first.call("exec_command", {"cmd": "sleep 60", "yield_time_ms": 100})
        await wait_for(pilot, lambda: table.row_count == 4, "inserted row")
        assert str(table.get_row_at(1)[0]).strip() == other.details["session_id"]
        assert str(table.get_row_at(table.cursor_row)[0]).strip() == chosen_id
        await pilot.press("x")
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmScreen), "confirm")
        assert text(app, "#question-title") == f"Stop shell job {chosen_id}?"
        await pilot.press("n")
