"""Pilot tests of issue 15: nothing stale, no lost drafts, a cursor that stays on its job,
the core tools on the Config screen, and every screen usable at 80×24."""

from __future__ import annotations

import json
from pathlib import Path

from textual.widgets import DataTable, Label, Static

from pct_tui.app import PctApp
from pct_tui.screens.approval import ConfirmScreen
from pct_tui.widgets.fit_text import FitText
from tests.tui.conftest import wait_for


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
        assert table.get_row_at(table.cursor_row)[2] == chosen_id
        # a job of the first session is inserted above the cursor
        other = await first.call("exec_command", {"cmd": "sleep 60", "yield_time_ms": 100})
        await wait_for(pilot, lambda: table.row_count == 4, "inserted row")
        assert table.get_row_at(1)[2] == other.details["session_id"]
        assert table.get_row_at(table.cursor_row)[2] == chosen_id
        await pilot.press("x")
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmScreen), "confirm")
        assert text(app, "#question-title") == f"Stop shell job {chosen_id}?"
        await pilot.press("n")
