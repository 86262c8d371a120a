"""The operator types into a running job's stdin from the output viewer (`i`, a hidden
input line): the program reads it, the model's next read and the journal get only how many
bytes, and `i` is offered only where stdin takes input (not in a monitor)."""

from __future__ import annotations

from pathlib import Path

from textual.widgets import DataTable, Input

from pct_tui.app import PctApp
from pct_tui.screens.output import OutputScreen
from pct_tui.widgets.output_log import OutputLog
from tests.serve.test_live_type_input import files_holding
from tests.tui.conftest import started, wait_for, write_config
from tests.tui.remote.helpers import agent_runtime, make, open_job_output

SECRET = "s3cret-pass"


def shown_actions(app: PctApp) -> set[str]:
    return {
        binding.action
        for _, binding, enabled, _tip in app.screen.active_bindings.values()
        if binding.show and enabled
    }


async def test_the_operator_types_a_password_the_model_never_reads(
    agent_dir: Path, tmp_path: Path
) -> None:
    write_config(agent_dir, {"shellSessions": {"enabled": True}})
    app = PctApp(agent_dir=agent_dir, serve=False, watch=False, cwd=tmp_path, discover=False)
    async with app.run_test(size=(80, 24)) as pilot:
        await started(app, pilot)
        session = await app.runtime.open_session("mcp", session_id="pct-session-typed")
        cmd = 'echo "Password:"; read pw; echo "got ${#pw} chars"; sleep 60'
        result = await session.call("exec_command", {"cmd": cmd, "yield_time_ms": 300})
        job = result.details["session_id"]
        await pilot.press("4")
        table = app.screen.query_one("#work-table", DataTable)
        await wait_for(pilot, lambda: table.row_count == 2, "rows")
        await pilot.press("down", "enter")
        await wait_for(pilot, lambda: isinstance(app.screen, OutputScreen), "viewer")
        assert "type_input" in shown_actions(app)
        typed = app.screen.query_one("#output-input", Input)
        assert not typed.display
        await pilot.press("i")
        assert typed.display
        assert typed.password  # masked on screen
        await pilot.press(*SECRET, "q")  # q types too: the line has the keys
        assert app.screen is not None
        assert isinstance(app.screen, OutputScreen)
        await pilot.press("backspace", "enter")
        assert not typed.display
        assert typed.value == ""
        log = app.screen.query_one(OutputLog)
        await wait_for(pilot, lambda: "got 11 chars" in "\n".join(log.lines), "the job read it")
        polled = await session.call("write_stdin", {"session_id": job, "chars": ""})
        assert (
            "stdin: the operator typed 12 bytes from the pct console (pct-tui); they are not "
            "shown to you"
        ) in polled.text
        assert SECRET not in polled.text
        # Escape leaves the input line without sending, a second Escape the viewer
        await pilot.press("i", "x", "escape")
        assert not typed.display
        assert isinstance(app.screen, OutputScreen)
        again = await session.call("write_stdin", {"session_id": job, "chars": ""})
        assert "operator typed" not in again.text
        await pilot.press("escape")
        await app.shutdown()
    assert files_holding(agent_dir, SECRET.encode()) == []
    assert files_holding(agent_dir, b"type_input")  # the journal has the act itself


async def test_typing_goes_to_another_runtime_over_live_control(
    agent_dir: Path, tmp_path: Path
) -> None:
    app, backend = make(agent_dir, tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        await started(app, pilot)
        runtime = agent_runtime(backend)
        await open_job_output(pilot, app)
        assert "type_input" in shown_actions(app)
        await pilot.press("i", *"pw", "enter")
        await wait_for(pilot, lambda: bool(runtime.typed), "typed")
        assert runtime.typed == [("job-1", "pw\n")]


async def test_a_monitor_offers_no_typing(agent_dir: Path, tmp_path: Path) -> None:
    app, backend = make(agent_dir, tmp_path, monitor=True)
    async with app.run_test(size=(80, 24)) as pilot:
        await started(app, pilot)
        runtime = agent_runtime(backend)
        await open_job_output(pilot, app)
        assert "type_input" not in shown_actions(app)
        await pilot.press("i", "x", "enter")
        await pilot.pause()
        assert runtime.typed == []
