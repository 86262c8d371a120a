"""Pilot tests of the console's flows, against the real embedded runtime.

Edit and save rules; a stale save keeps the draft; nested apply_patch approvals from a real
MCP client over the console's HTTP endpoint (Yes and No); stopping a shell job from the
sessions screen; the changed-on-disk banner.
"""

from __future__ import annotations

from pathlib import Path

from textual.widgets import DataTable

from pct_tui.app import PctApp
from pct_tui.screens.approval import ConfirmScreen
from tests.tui.conftest import started, wait_for, write_config


async def test_stop_a_shell_job_from_the_sessions_screen(agent_dir: Path, tmp_path: Path) -> None:
    write_config(agent_dir, {"shellSessions": {"enabled": True}})
    app = PctApp(agent_dir=agent_dir, serve=False, watch=False, cwd=tmp_path)
    async with app.run_test(size=(130, 40)) as pilot:
        await started(app, pilot)
        session = await app.runtime.open_session("mcp", session_id="pct-session-test")
        result = await session.call(
            "exec_command", {"cmd": "echo started; sleep 60", "yield_time_ms": 300}
        )
        job_id = result.details["session_id"]
        await pilot.press("4")
        await wait_for(pilot, lambda: app.current_mode == "sessions")
        table = app.screen.query_one("#work-table", DataTable)
        await wait_for(pilot, lambda: table.row_count == 2, "rows")
        assert str(table.get_row_at(1)[0]).strip() == job_id
        assert str(table.get_row_at(1)[2]) == "running"
        await pilot.press("down", "x")
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmScreen), "confirmation")
        assert str(app.screen.query_one("#question-title").render()) == (
            f"Stop shell job {job_id}?"
        )
        await pilot.press("y")
        await wait_for(pilot, lambda: str(table.get_row_at(1)[2]) == "terminated", "stopped")
        # the agent's next poll sees the terminal state
        polled = await session.call("write_stdin", {"session_id": job_id, "chars": ""})
        assert polled.text.startswith(f"session_id {job_id}: terminated\n")
        # ... and that a person stopped it from this console, so it does not just rerun it
        assert "stopped by the operator from the pct console (pct-tui)" in polled.text
        assert polled.details["stopped_by"] == "console"
        # Exit is what that poll told the agent (a signal by name, not -15)
        told = polled.text.splitlines()[1].removeprefix("exit_code: ")
        assert str(table.get_row_at(1)[3]) == told
        assert told.startswith("SIG")


async def test_output_viewer_follows_a_job(agent_dir: Path, tmp_path: Path) -> None:
    write_config(agent_dir, {"shellSessions": {"enabled": True}})
    app = PctApp(agent_dir=agent_dir, serve=False, watch=False, cwd=tmp_path)
    async with app.run_test(size=(130, 40)) as pilot:
        await started(app, pilot)
        session = await app.runtime.open_session("mcp", session_id="pct-session-view")
        await session.call(
            "exec_command",
            {"cmd": "echo first; read line; echo got $line; sleep 60", "yield_time_ms": 300},
        )
        await pilot.press("4")
        table = app.screen.query_one("#work-table", DataTable)
        await wait_for(pilot, lambda: table.row_count == 2, "rows")
        await pilot.press("down", "enter")
        from pct_tui.widgets.output_log import OutputLog

        await wait_for(pilot, lambda: bool(app.screen.query(OutputLog)), "viewer")
        log = app.screen.query_one(OutputLog)
        await wait_for(pilot, lambda: "first" in "\n".join(log.lines), "initial output")
        job_id = app.console_state.work[0].id
        await session.call("write_stdin", {"session_id": job_id, "chars": "hello\n"})
        await wait_for(pilot, lambda: "got hello" in "\n".join(log.lines), "live output")
        await pilot.press("escape")


async def test_stop_a_code_cell_and_end_a_session(agent_dir: Path, tmp_path: Path) -> None:
    write_config(agent_dir, {"shellSessions": {"enabled": True}, "codeMode": {"enabled": True}})
    app = PctApp(agent_dir=agent_dir, serve=False, watch=False, cwd=tmp_path)
    async with app.run_test(size=(130, 40)) as pilot:
        await started(app, pilot)
        session = await app.runtime.open_session("mcp", session_id="pct-session-cells")
        result = await session.call(
            "exec", {"code": "text('spinning')\nwhile True:\n    pass", "yield_time_ms": 300}
        )
        assert result.details["status"] == "running", result.text
        await pilot.press("4")
        table = app.screen.query_one("#work-table", DataTable)
        await wait_for(pilot, lambda: table.row_count == 2, "rows")
        assert str(table.get_row_at(1)[1]) == "code"
        await pilot.press("down", "x")
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmScreen), "confirmation")
        assert str(app.screen.query_one("#question-title").render()).startswith("Stop code cell")
        await pilot.press("y")
        await wait_for(pilot, lambda: str(table.get_row_at(1)[2]) == "terminated", "stopped")
        # end the whole session (confirmed): it leaves the runtime
        await pilot.press("up", "T")
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmScreen), "confirmation")
        await pilot.press("n")  # No keeps it
        await pilot.pause()
        assert app.runtime.session("pct-session-cells") is not None
        await pilot.press("T")
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmScreen), "confirmation")
        await pilot.press("y")
        await wait_for(pilot, lambda: app.runtime.session("pct-session-cells") is None, "ended")
        assert session.closed


async def test_cells_of_a_rebound_code_manager_still_appear(
    agent_dir: Path, tmp_path: Path
) -> None:
    """Disabling Code Mode stops its cells and a re-enable binds a fresh manager; the
    sessions view must follow the new manager, not only the one it saw at session open."""
    config = {"shellSessions": {"enabled": True}, "codeMode": {"enabled": True}}
    write_config(agent_dir, config)
    app = PctApp(agent_dir=agent_dir, serve=False, watch=False, cwd=tmp_path)
    async with app.run_test(size=(130, 40)) as pilot:
        await started(app, pilot)
        session = await app.runtime.open_session("mcp", session_id="pct-session-rebind")
        spin = {"code": "while True:\n    pass", "yield_time_ms": 100}
        first = await session.call("exec", spin)
        state = app.console_state
        await wait_for(pilot, lambda: any(r.kind == "code" for r in state.work), "first cell")
        write_config(agent_dir, {**config, "codeMode": {"enabled": False}})
        await app.runtime.reload()
        write_config(agent_dir, config)
        await app.runtime.reload()
        second = await session.call("exec", spin)
        assert second.details["cell_id"] != first.details["cell_id"]
        await wait_for(
            pilot,
            lambda: any(r.id == second.details["cell_id"] for r in state.work),
            "cell of the rebound manager",
        )
        await session.close()


async def test_a_second_stop_of_a_job_still_stopping_says_so(
    agent_dir: Path, tmp_path: Path
) -> None:
    write_config(agent_dir, {"shellSessions": {"enabled": True}})
    app = PctApp(agent_dir=agent_dir, serve=False, watch=False, cwd=tmp_path)
    async with app.run_test(size=(130, 40)) as pilot:
        await started(app, pilot)
        session = await app.runtime.open_session("mcp", session_id="pct-session-twice")
        # SIGTERM is ignored: the stop waits its grace period before SIGKILL.
        cmd = "trap '' TERM; while :; do sleep 0.05; done"
        result = await session.call("exec_command", {"cmd": cmd, "yield_time_ms": 300})
        job_id = result.details["session_id"]
        await pilot.press("4")
        table = app.screen.query_one("#work-table", DataTable)
        await wait_for(pilot, lambda: table.row_count == 2, "rows")
        await pilot.press("down", "x")
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmScreen), "confirmation")
        await pilot.press("y")
        await wait_for(pilot, lambda: str(table.get_row_at(1)[2]) == "stopping", "stopping")
        await pilot.press("x")
        expected = f"shell job {job_id} is already stopping (a stop was requested earlier)."
        await wait_for(
            pilot, lambda: expected in [str(n.message) for n in app._notifications], "notice"
        )
        assert not isinstance(app.screen, ConfirmScreen)  # nothing asked, nothing sent twice
        await wait_for(pilot, lambda: str(table.get_row_at(1)[2]) == "terminated", "stopped")
