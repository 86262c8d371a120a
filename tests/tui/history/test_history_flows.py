"""Pilot tests of the History screen on a real journal in the agent dir.

The journal is filled through its own API as another pct process would (a real patch with
its file images, plain calls): list newest first across a console restart, filters,
opening a call (its diff), undo confirmed (the file is restored) and refused (the message
names the file), the empty journal, lazy loading of older calls and polling only while
the screen is shown.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.pilot import Pilot
from textual.widgets import DataTable, Input, Select

import pct_tui.screens.history.screen as history_module
from pct_runtime.journal.store import db_path
from pct_tui.app import PctApp
from pct_tui.screens.approval import ConfirmScreen
from pct_tui.screens.history.call import CallScreen
from pct_tui.screens.history.screen import EMPTY, NO_MATCH, NOT_RECORDING, TITLE, HistoryScreen
from tests.journal.helpers import damage
from tests.tui.conftest import show, started, text, wait_for, write_config
from tests.tui.history.journal_fill import apply_and_record, call, record

BEFORE = 'print("hello")\n'
AFTER = 'print("hello, console")\n'
PATCH = (
    "*** Begin Patch\n*** Update File: app.py\n@@\n"
    '-print("hello")\n+print("hello, console")\n*** End Patch'
)


def make_app(agent_dir: Path, cwd: Path) -> PctApp:
    app = PctApp(agent_dir=agent_dir, serve=False, watch=False, cwd=cwd)
    app.NOTIFICATION_TIMEOUT = 3600  # a toast the test reads must not leave first
    return app


def cells(app: PctApp) -> list[list[str]]:
    table = app.screen.query_one("#history-table", DataTable)
    return [[str(cell) for cell in table.get_row_at(i)] for i in range(table.row_count)]


def tools(app: PctApp) -> list[str]:
    return [row[2] for row in cells(app)]


def notes(app: PctApp) -> str:
    return "\n".join(str(n.message) for n in app._notifications)


def patch_then_command(agent_dir: Path, cwd: Path) -> None:
    """A patch of app.py, then a command, in session alpha."""
    (cwd / "app.py").write_text(BEFORE)
    apply_and_record(agent_dir, cwd, PATCH)
    recovery = (str(cwd / "recovery" / "stdout.txt"),)
    record(agent_dir, call(summary="echo journaled", result="journaled", recovery_paths=recovery))


async def history(app: PctApp, pilot: Pilot[None], rows: int) -> HistoryScreen:
    await show(app, pilot, "6", "history")
    screen = app.screen
    assert isinstance(screen, HistoryScreen)
    table = screen.query_one("#history-table", DataTable)
    await wait_for(pilot, lambda: table.row_count >= rows, f"{rows} rows")
    return screen


async def test_empty_journal_says_what_will_appear(agent_dir: Path, tmp_path: Path) -> None:
    app = make_app(agent_dir, tmp_path)
    async with app.run_test(size=(100, 30)) as pilot:
        await started(app, pilot)
        await show(app, pilot, "6", "history")
        await wait_for(pilot, lambda: text(app, "#history-detail") == EMPTY, "empty text")
        assert app.screen.query_one("#history-table", DataTable).row_count == 0


async def test_list_newest_first_across_a_restart_and_filters(
    agent_dir: Path, tmp_path: Path
) -> None:
    patch_then_command(agent_dir, tmp_path)
    first = make_app(agent_dir, tmp_path)
    async with first.run_test(size=(120, 36)) as pilot:
        await started(first, pilot)
        await history(first, pilot, 2)
    record(
        agent_dir,
        call("apply_patch", session="pct-session-beta", outcome="error", summary="gone.txt"),
    )
    # a new console (a restart) lists every call, newest first
    app = make_app(agent_dir, tmp_path)
    async with app.run_test(size=(120, 36)) as pilot:
        await started(app, pilot)
        screen = await history(app, pilot, 3)
        assert tools(app) == ["apply_patch", "exec_command", "apply_patch"]
        assert [row[3] for row in cells(app)] == ["error", "ok", "ok"]
        assert [row[1] for row in cells(app)] == ["beta", "alpha", "alpha"]
        assert "app.py" in cells(app)[2][5]
        # outcome filter
        screen.query_one("#history-outcome", Select).value = "error"
        await wait_for(pilot, lambda: tools(app) == ["apply_patch"], "errors only")
        # session filter (its choices are the sessions seen) with the outcome cleared
        screen.query_one("#history-outcome", Select).clear()
        screen.query_one("#history-session", Select).value = "pct-session-alpha"
        await wait_for(pilot, lambda: tools(app) == ["exec_command", "apply_patch"], "alpha")
        # tool filter on top of it
        screen.query_one("#history-tool", Select).value = "exec_command"
        await wait_for(pilot, lambda: tools(app) == ["exec_command"], "alpha's commands")
        # `c` clears every filter; `/` types free text (summaries, results, tools, sessions)
        await pilot.press("c")
        await wait_for(pilot, lambda: len(tools(app)) == 3, "cleared")
        await pilot.press("slash")
        assert isinstance(app.focused, Input)
        await pilot.press(*"journaled", "enter")
        await wait_for(pilot, lambda: tools(app) == ["exec_command"], "text filter")
        assert isinstance(app.focused, DataTable)
        await pilot.press("slash", *"nothing-like-this", "enter")
        await wait_for(pilot, lambda: text(app, "#history-detail") == NO_MATCH, "no match")


async def test_open_a_patch_call_shows_its_diff_and_result(agent_dir: Path, tmp_path: Path) -> None:
    patch_then_command(agent_dir, tmp_path)
    app = make_app(agent_dir, tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        await started(app, pilot)
        await history(app, pilot, 2)
        await pilot.press("down", "enter")
        await wait_for(pilot, lambda: isinstance(app.screen, CallScreen), "call view")
        assert "pct-session-alpha" in text(app, "#call-facts")
        assert "app.py" in text(app, "#call-summary")
        assert "app.py" in text(app, "#call-result")
        await wait_for(
            pilot, lambda: '+print("hello, console")' in text(app, "#call-diff"), "the diff"
        )
        assert '-print("hello")' in text(app, "#call-diff")
        await pilot.press("escape")
        await wait_for(pilot, lambda: isinstance(app.screen, HistoryScreen), "back")
        # a command's view: its result and recovery files, no diff, no Undo in the footer
        await pilot.press("up", "enter")
        await wait_for(pilot, lambda: isinstance(app.screen, CallScreen), "command view")
        assert "journaled" in text(app, "#call-result")
        assert text(app, "#call-recovery") == str(tmp_path / "recovery" / "stdout.txt")
        assert not app.screen.query("#call-diff")
        assert app.screen.check_action("undo", ()) is False


async def test_undo_confirmed_restores_the_file(agent_dir: Path, tmp_path: Path) -> None:
    patch_then_command(agent_dir, tmp_path)
    target = tmp_path / "app.py"
    assert target.read_text() == AFTER
    app = make_app(agent_dir, tmp_path)
    async with app.run_test(size=(120, 36)) as pilot:
        await started(app, pilot)
        await history(app, pilot, 2)
        # `u` on a command explains and asks nothing
        await pilot.press("u")
        await wait_for(pilot, lambda: "only patch calls can be undone" in notes(app), "note")
        assert not isinstance(app.screen, ConfirmScreen)
        await pilot.press("down", "u")
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmScreen), "confirmation")
        assert str(target) in text(app, "#question-message")
        await pilot.press("n")  # No changes nothing
        await pilot.pause()
        assert target.read_text() == AFTER
        await pilot.press("u")
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmScreen), "confirmation")
        await pilot.press("y")
        await wait_for(pilot, lambda: target.read_text() == BEFORE, "file restored")
        # the undo is itself a journaled console call, and the patch reads `undone`
        await wait_for(pilot, lambda: tools(app)[0] == "undo", "undo row")
        await wait_for(pilot, lambda: cells(app)[2][3] == "undone", "patch marked undone")
        assert "Undid" in text(app, "#history-detail")  # beside the patch, still highlighted
        screen = app.screen
        assert isinstance(screen, HistoryScreen)
        assert screen.records[0].transport == "console"


async def test_undo_refused_names_the_changed_file(agent_dir: Path, tmp_path: Path) -> None:
    patch_then_command(agent_dir, tmp_path)
    target = tmp_path / "app.py"
    target.write_text("edited by hand\n")
    app = make_app(agent_dir, tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        await started(app, pilot)
        await history(app, pilot, 2)
        await pilot.press("down", "enter")
        await wait_for(pilot, lambda: isinstance(app.screen, CallScreen), "call view")
        await pilot.press("u")
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmScreen), "confirmation")
        await pilot.press("y")
        await wait_for(pilot, lambda: bool(app.screen.query("#call-note")), "outcome")
        assert str(target) in text(app, "#call-note")
        assert str(target) in notes(app)
        assert target.read_text() == "edited by hand\n"


async def test_undo_refused_names_a_folder_replaced_by_a_link(
    agent_dir: Path, tmp_path: Path
) -> None:
    """A job swapped the patched file's folder for a link to the user's files: the console's
    undo (the same API as `pct undo`) refuses, says which folder, and writes nowhere."""
    work, users = tmp_path / "work", tmp_path / "users"
    (work / "sub").mkdir(parents=True)
    users.mkdir()
    (work / "sub" / "app.py").write_text(BEFORE)
    apply_and_record(agent_dir, work, PATCH.replace("app.py", "sub/app.py"))
    (users / "app.py").write_text(AFTER)  # what the patch wrote, in the user's folder
    (work / "sub" / "app.py").unlink()
    (work / "sub").rmdir()
    (work / "sub").symlink_to(users, target_is_directory=True)
    app = make_app(agent_dir, work)
    async with app.run_test(size=(120, 40)) as pilot:
        await started(app, pilot)
        await history(app, pilot, 1)
        await pilot.press("enter")
        await wait_for(pilot, lambda: isinstance(app.screen, CallScreen), "call view")
        await pilot.press("u")
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmScreen), "confirmation")
        await pilot.press("y")
        await wait_for(pilot, lambda: bool(app.screen.query("#call-note")), "outcome")
        note = text(app, "#call-note")
        assert str(work / "sub") in note
        assert "symbolic link" in note
        assert "symbolic link" in notes(app)
    assert (users / "app.py").read_text() == AFTER
    assert sorted(p.name for p in users.iterdir()) == ["app.py"]


async def test_new_calls_appear_while_shown_and_older_ones_load_at_the_end(
    agent_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(history_module, "PAGE", 3)
    record(agent_dir, *(call(summary=f"echo call-{n}") for n in range(4)))
    app = make_app(agent_dir, tmp_path)
    async with app.run_test(size=(120, 36)) as pilot:
        await started(app, pilot)
        screen = await history(app, pilot, 3)
        await wait_for(pilot, lambda: len(screen.records) == 3, "one page")
        await pilot.press("ctrl+end")
        await wait_for(pilot, lambda: len(screen.records) == 4, "the older call")
        assert "call-0" in cells(app)[3][5]
        # a call journaled (by another process) while the screen is shown appears by itself
        record(agent_dir, call(summary="echo latest"))
        await wait_for(pilot, lambda: "latest" in cells(app)[0][5], "polled row")


async def test_no_polling_while_hidden(
    agent_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    app = make_app(agent_dir, tmp_path)
    async with app.run_test(size=(100, 30)) as pilot:
        await started(app, pilot)
        checks: list[int] = []
        real = app.facade.journal.newest_seq

        async def counted() -> int:
            checks.append(1)
            return await real()

        monkeypatch.setattr(app.facade.journal, "newest_seq", counted)
        await show(app, pilot, "6", "history")
        await wait_for(pilot, lambda: len(checks) >= 3, "polls while shown")
        await show(app, pilot, "1", "status")
        await pilot.pause(0.1)
        seen = len(checks)
        await pilot.pause(2.5)
        assert len(checks) == seen


async def test_a_patch_made_through_the_runtime_is_listed_and_undone(
    agent_dir: Path, tmp_path: Path
) -> None:
    """End to end: the runtime journals an agent's apply_patch; History lists it and undoes it."""
    write_config(agent_dir, {"applyPatch": {"enabled": True}})
    target = tmp_path / "app.py"
    target.write_text(BEFORE)
    app = make_app(agent_dir, tmp_path)
    async with app.run_test(size=(120, 36)) as pilot:
        await started(app, pilot)
        session = await app.runtime.open_session("mcp", session_id="pct-session-agent")
        await session.call("apply_patch", {"patch": PATCH})
        assert target.read_text() == AFTER
        screen = await history(app, pilot, 1)
        assert tools(app) == ["apply_patch"]
        assert cells(app)[0][1] == "agent"
        await pilot.press("u")
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmScreen), "confirmation")
        await pilot.press("y")
        await wait_for(pilot, lambda: target.read_text() == BEFORE, "file restored")
        await wait_for(pilot, lambda: tools(app)[:2] == ["undo", "apply_patch"], "undo row")
        assert screen.records[0].undo_of == screen.records[1].call_id


async def test_the_title_says_when_new_calls_are_not_recorded(
    agent_dir: Path, tmp_path: Path
) -> None:
    write_config(agent_dir, {"pct": {"journal": {"enabled": False}}})
    app = make_app(agent_dir, tmp_path)
    async with app.run_test(size=(160, 30)) as pilot:
        await started(app, pilot)
        await show(app, pilot, "6", "history")
        await wait_for(pilot, lambda: NOT_RECORDING in text(app, "#history-title"), "off note")
        # switched on and reloaded: the note goes
        write_config(agent_dir, {})
        await pilot.press("ctrl+r")
        await wait_for(pilot, lambda: text(app, "#history-title") == TITLE, "note gone")


async def test_the_title_says_which_field_turned_the_journal_off(
    agent_dir: Path, tmp_path: Path
) -> None:
    write_config(agent_dir, {"pct": {"journal": {"maxAgeDays": 0}}})
    app = make_app(agent_dir, tmp_path)
    async with app.run_test(size=(200, 30)) as pilot:
        await started(app, pilot)
        await show(app, pilot, "6", "history")
        why = " · not recording new calls (pct.journal.maxAgeDays must be a number greater than 0)"
        await wait_for(pilot, lambda: text(app, "#history-title") == TITLE + why, "why off")


async def test_an_unreadable_journal_is_reported_not_fatal(agent_dir: Path, tmp_path: Path) -> None:
    (agent_dir / "pct").write_text("not a directory\n")  # the journal cannot be created
    app = make_app(agent_dir, tmp_path)
    async with app.run_test(size=(120, 30)) as pilot:
        await started(app, pilot)
        await show(app, pilot, "6", "history")
        await wait_for(
            pilot,
            lambda: text(app, "#history-detail").startswith("The call journal could not be read:"),
            "error text",
        )
        await show(app, pilot, "1", "status")  # the console goes on


async def test_a_damaged_journal_says_what_to_do_and_the_console_goes_on(
    agent_dir: Path, tmp_path: Path
) -> None:
    for n in range(40):
        record(agent_dir, call(summary=f"echo {n} " + "x" * 500, result="y" * 500))
    damage(db_path(agent_dir))
    app = make_app(agent_dir, tmp_path)
    async with app.run_test(size=(160, 30)) as pilot:
        await started(app, pilot)
        await show(app, pilot, "6", "history")
        expected = (
            f"The call journal could not be read: the journal {db_path(agent_dir)} is damaged"
        )
        await wait_for(
            pilot, lambda: text(app, "#history-detail").startswith(expected), "damaged text"
        )
        assert "move it aside" in text(app, "#history-detail")
        await show(app, pilot, "1", "status")  # the console goes on


async def test_a_watching_console_undoes_nothing(
    agent_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A read-only console (`pct-tui --monitor`) lists and opens calls; `u` names `pct undo`."""
    patch_then_command(agent_dir, tmp_path)
    app = make_app(agent_dir, tmp_path)
    monkeypatch.setattr(app.facade.journal, "_read_only", lambda: True)
    async with app.run_test(size=(120, 36)) as pilot:
        await started(app, pilot)
        screen = await history(app, pilot, 2)
        await pilot.press("down", "u")
        call_id = screen.records[1].call_id
        await wait_for(pilot, lambda: f"pct undo {call_id}" in notes(app), "refusal")
        assert not isinstance(app.screen, ConfirmScreen)
        assert (tmp_path / "app.py").read_text() == AFTER
        assert (await app.facade.journal.undo(call_id)).ok is False
        assert (tmp_path / "app.py").read_text() == AFTER


async def test_pct_tui_monitor_undoes_nothing(agent_dir: Path, tmp_path: Path) -> None:
    """`pct-tui --monitor` itself (not a patched switch): History's undo is refused."""
    patch_then_command(agent_dir, tmp_path)
    app = PctApp(agent_dir=agent_dir, serve=False, watch=False, cwd=tmp_path, monitor=True)
    app.NOTIFICATION_TIMEOUT = 3600
    async with app.run_test(size=(120, 36)) as pilot:
        await started(app, pilot)
        await history(app, pilot, 2)
        await pilot.press("down", "u")
        await wait_for(pilot, lambda: "pct undo" in notes(app), "refusal")
        assert not isinstance(app.screen, ConfirmScreen)
        assert (tmp_path / "app.py").read_text() == AFTER
