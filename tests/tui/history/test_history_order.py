"""History lists calls newest first by when they started, each Code Mode cell's nested calls
right under it in the order they ran (the journal numbers calls as they finish)."""

from __future__ import annotations

from pct_runtime.journal.records import CallRecord
from pct_tui.screens.history.view import in_time_order


def call(call_id: str, seq: int, started: float, parent: str | None = None) -> CallRecord:
    return CallRecord(
        call_id=call_id,
        seq=seq,
        time=started,
        session_id="s",
        client_name=None,
        client_version=None,
        model=None,
        tool="apply_patch" if parent else "exec",
        transport="mcp",
        path="nested" if parent else "direct",
        parent_call_id=parent,
        summary="",
        outcome="ok",
        error_code=None,
        duration_ms=1.0,
        result_text="",
    )


def test_a_long_cell_sits_at_its_start_with_its_calls_under_it() -> None:
    # newest first by finish (the journal's seq): the cell finished last
    records = [
        call("cell", 5, 100.0),
        call("late", 4, 130.0),
        call("nested-2", 3, 120.0, parent="cell"),
        call("early", 2, 90.0),
        call("nested-1", 1, 110.0, parent="cell"),
    ]
    order = [r.call_id for r in in_time_order(records)]
    assert order == ["late", "cell", "nested-1", "nested-2", "early"]


def test_a_nested_call_without_its_cell_stands_at_its_own_time() -> None:
    records = [call("other", 3, 200.0), call("orphan", 2, 150.0, parent="gone")]
    assert [r.call_id for r in in_time_order(records)] == ["other", "orphan"]
