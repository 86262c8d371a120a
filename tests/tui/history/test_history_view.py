"""The History screen's texts: durations, times, why `u` does nothing, the undo question
and its outcome (a refusal always names the files changed since)."""

from __future__ import annotations

import time
from dataclasses import replace

from pct_runtime.journal import FileImage, PatchFile
from pct_tui.journal_access import CallRecord, UndoOutcome
from pct_tui.screens.history.call import MAX_DIFF_LINES, shown_diff
from pct_tui.screens.history.view import (
    call_time,
    detail_line,
    duration,
    not_undoable,
    tool_cell,
    undo_question,
    undo_report,
)

EXEC = CallRecord(
    call_id="c-0000000001",
    seq=1,
    time=time.time(),
    session_id="pct-session-a",
    client_name="codex",
    client_version="1.2.3",
    model="openai/gpt-5.1",
    tool="exec_command",
    transport="stdio",
    path="direct",
    parent_call_id=None,
    summary="echo hi",
    outcome="ok",
    error_code=None,
    duration_ms=850,
    result_text="hi",
    recovery_paths=(),
    patch_files=(),
    undo_of=None,
    undone_by=None,
)
IMAGE = FileImage(sha256="0" * 64, mode=0o644)
PATCH = replace(
    EXEC,
    call_id="c-0000000002",
    tool="apply_patch",
    patch_files=(
        PatchFile("/w/new.txt", None, IMAGE),
        PatchFile("/w/old.txt", IMAGE, None),
        PatchFile("/w/app.py", IMAGE, IMAGE),
    ),
)


def test_durations_fit_the_column() -> None:
    assert duration(850) == "850 ms"
    assert duration(12_345) == "12.3 s"
    assert duration(245_000) == "4 m 05 s"


def test_times_today_and_earlier() -> None:
    now = time.mktime((2026, 12, 1, 15, 0, 0, 0, 0, -1))
    assert call_time(now - 5, now) == "14:59:55"
    assert call_time(now - 3 * 86400, now) == "11-28 15:00"


def test_why_u_does_nothing() -> None:
    assert "only patch calls can be undone" in not_undoable(EXEC)
    assert "already undone by c-9" in not_undoable(replace(PATCH, undone_by="c-9"))
    failed = replace(PATCH, outcome="error", error_code="verification-failed")
    assert "did not apply (error)" in not_undoable(failed)


def test_the_question_names_every_file_and_what_happens_to_it() -> None:
    title, message = undo_question(PATCH)
    assert title == "Undo patch c-0000000002?"
    assert "remove   /w/new.txt  (the patch created it)" in message
    assert "recreate /w/old.txt" in message
    assert "restore  /w/app.py" in message


def test_a_refusal_names_the_changed_files_even_if_the_message_does_not() -> None:
    refused = UndoOutcome(
        ok=False, message="Undo refused.", undo_call_id=None, changed_since=("/w/app.py",)
    )
    assert undo_report(refused) == "Undo refused.\nChanged since the patch: /w/app.py"
    named = replace(refused, message="Undo refused: /w/app.py changed since the patch.")
    assert undo_report(named) == named.message


def test_nested_calls_and_the_detail_line() -> None:
    nested = replace(EXEC, path="nested", parent_call_id="c-1")
    assert tool_cell(nested) == "↳ exec_command"
    line = detail_line(replace(PATCH, outcome="ok"))
    assert "client codex 1.2.3 · model openai/gpt-5.1 · stdio" in line
    assert line.endswith("u undoes its file changes.")
    assert detail_line(EXEC).endswith("Enter opens it.")


def test_undoing_an_undo_says_so() -> None:
    undo = replace(PATCH, call_id="c-0000000003", tool="undo", undo_of="c-0000000002")
    title, message = undo_question(undo)
    assert title == "Undo undo c-0000000003?"
    assert "remove   /w/new.txt  (the undo created it)" in message


def test_a_huge_diff_is_cut_and_says_how_much_is_left() -> None:
    diff = "\n".join(f"+line {n}" for n in range(MAX_DIFF_LINES + 5))
    shown = shown_diff(diff).splitlines()
    assert len(shown) == MAX_DIFF_LINES + 1
    assert shown[-1] == "… 5 more diff lines not shown"
    assert shown_diff("x\n") == "x\n"
    assert "only modes or names" in shown_diff("")
