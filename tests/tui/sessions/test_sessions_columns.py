"""At 80 columns the Sessions table keeps Exit and Recovery on screen, each column means one
thing on every row (name, kind, state, exit, recovery), and model and client move to the
detail line."""

from __future__ import annotations

from pathlib import Path

from textual.widgets import DataTable

from pct_tui.app import PctApp
from tests.tui.conftest import screen_lines, show, started, text, wait_for, write_config


async def test_exit_and_recovery_fit_80_columns(agent_dir: Path, tmp_path: Path) -> None:
    write_config(agent_dir, {"shellSessions": {"enabled": True}})
    app = PctApp(agent_dir=agent_dir, serve=False, watch=False, cwd=tmp_path, discover=False)
    async with app.run_test(size=(80, 24)) as pilot:
        await started(app, pilot)
        session = await app.runtime.open_session("mcp", session_id="pct-session-narrow")
        # Still running at the first answer, so its output has recovery files.
        result = await session.call(
            "exec_command",
            {"cmd": "echo out; echo err >&2; sleep 1; exit 3", "yield_time_ms": 250},
        )
        job = result.details["session_id"]
        while "exit_code: 3" not in result.text:
            result = await session.call(
                "write_stdin", {"session_id": job, "chars": "", "yield_time_ms": 3000}
            )
        await show(app, pilot, "4", "sessions")
        table = app.screen.query_one("#work-table", DataTable)
        await wait_for(pilot, lambda: table.row_count == 2, "rows")
        await pilot.pause()
        lines = screen_lines(app)
        header = next(line for line in lines if "Name" in line and "State" in line)
        assert header.split() == ["Name", "Kind", "State", "Exit", "Recovery"]
        row = next(line for line in lines if job in line)
        assert len(row) <= 80
        assert row.split()[1:4] == ["shell", "completed", "3"]
        assert row.rstrip().endswith(" +1")  # the first recovery file, shortened, and one more
        session_row = [str(c) for c in table.get_row_at(0)]
        assert session_row == ["pct-session-narrow", "session (mcp)", "open", "", ""]
        assert "model —" in text(app, "#work-detail")
        await pilot.press("down")
        detail = text(app, "#work-detail")
        assert detail.startswith(f"shell {job} of session pct-session-narrow · exit 3")
        assert detail.count(".txt") == 2  # both recovery files in full


async def test_recovery_shows_every_path_when_wide(agent_dir: Path, tmp_path: Path) -> None:
    write_config(agent_dir, {"shellSessions": {"enabled": True}})
    app = PctApp(agent_dir=agent_dir, serve=False, watch=False, cwd=tmp_path, discover=False)
    async with app.run_test(size=(200, 48)) as pilot:
        await started(app, pilot)
        session = await app.runtime.open_session("mcp", session_id="pct-session-wide")
        await session.call(
            "exec_command", {"cmd": "echo out; echo err >&2; sleep 1", "yield_time_ms": 200}
        )
        await show(app, pilot, "4", "sessions")
        table = app.screen.query_one("#work-table", DataTable)
        await wait_for(pilot, lambda: table.row_count == 2, "rows")
        recovery = str(table.get_row_at(1)[4])
        assert "+1" not in recovery
        assert recovery.count(", ") == 1
