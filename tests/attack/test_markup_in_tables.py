"""Text the model or an MCP client chose is shown as text, never parsed as console markup.

A command line such as `echo "[/]"` or a client named `[bold]x` used to go into a
DataTable cell as a plain string, which Textual parses as Rich markup: a stray closing tag
raised MarkupError and took the console down when the History screen drew it.
"""

from __future__ import annotations

from pathlib import Path

from textual.content import Content
from textual.widgets import DataTable, OptionList

from pct_tui.app import PctApp
from tests.tui.conftest import show, started, text, wait_for, write_config
from tests.tui.history.journal_fill import call, record
from tests.tui.remote.live_double import DoubleBackend, DoubleRuntime

HOSTILE = 'echo "[/]" [bold]not bold[/bold] [@click=app.quit]x[/]'


async def test_history_shows_a_summary_with_markup_as_written(
    agent_dir: Path, tmp_path: Path
) -> None:
    record(agent_dir, call(summary=HOSTILE))
    app = PctApp(agent_dir=agent_dir, serve=False, watch=False, cwd=tmp_path)
    async with app.run_test(size=(160, 30)) as pilot:
        await started(app, pilot)
        await show(app, pilot, "6", "history")
        table = app.screen.query_one("#history-table", DataTable)
        await wait_for(pilot, lambda: table.row_count == 1, "one row")
        await pilot.pause()
        assert str(table.get_row_at(0)[-1]) == HOSTILE
        assert app.is_running


async def test_sessions_show_a_client_name_with_markup_as_written(
    agent_dir: Path, tmp_path: Path
) -> None:
    """Any MCP client names itself (clientInfo); the Sessions detail line shows that name."""
    backend = DoubleBackend()
    app = PctApp(agent_dir=agent_dir, serve=False, watch=False, cwd=tmp_path, live=backend)
    async with app.run_test(size=(160, 30)) as pilot:
        await started(app, pilot)
        runtime = backend.add(DoubleRuntime(4242))
        runtime.open_session("pct-session-agent", client="[/]evil", version="[b]1")
        await show(app, pilot, "4", "sessions")
        table = app.screen.query_one("#work-table", DataTable)
        await wait_for(pilot, lambda: table.row_count == 3, "the runtime and its session")
        await pilot.pause()
        table.move_cursor(row=2)
        await pilot.pause()
        assert "client [/]evil [b]1" in text(app, "#work-detail")
        assert app.is_running


async def test_rules_show_a_pattern_with_brackets_as_written(
    agent_dir: Path, tmp_path: Path
) -> None:
    """A rule's model glob may hold `[...]`; the Rules list used to parse it as markup
    (`[/]` crashed the console, `[b]` vanished)."""
    rule = {"id": "r1", "match": "x[b]y[/b][/]", "patch": True, "shell": False, "code": False}
    write_config(agent_dir, {"execution": {"version": 1, "rules": [rule]}})
    app = PctApp(agent_dir=agent_dir, serve=False, watch=False, cwd=tmp_path)
    async with app.run_test(size=(130, 30)) as pilot:
        await started(app, pilot)
        await show(app, pilot, "3", "rules")
        options = app.screen.query_one("#rules-list", OptionList)
        await wait_for(pilot, lambda: options.option_count == 1, "the rule")
        await pilot.pause()
        assert "x[b]y[/b][/]" in str(options.get_option_at_index(0).prompt)
        assert "x[b]y[/b][/]" in options.render_line(0).text
        assert app.is_running


async def test_a_toast_names_a_bracketed_path_as_written(agent_dir: Path, tmp_path: Path) -> None:
    """Undo and stop reports name files and commands; a toast parsed them as markup, so
    `app/[slug]/page.tsx` read `app//page.tsx` (and `[/]` could not be shown)."""
    app = PctApp(agent_dir=agent_dir, serve=False, watch=False, cwd=tmp_path)
    async with app.run_test(size=(120, 30)) as pilot:
        await started(app, pilot)
        app.screen.notify("Changed since the patch: app/[slug]/page.tsx, x [/] y")
        await pilot.pause()
        (note,) = list(app._notifications)
        # What a Toast draws (textual.widgets._toast.Toast.render).
        draw = Content.from_markup if note.markup else Content
        shown = draw(note.message).plain
        assert "app/[slug]/page.tsx, x [/] y" in shown
