"""SVG snapshots of the History screen at 80×24 and 160×48: the empty journal, a journal of
calls, a patch call opened (its diff) and the undo confirmation.

Same fixed agent dir, lock and `still` wait as `tests/tui/test_tui_snapshots.py`; the
journal is filled through its API with fixed call ids and durations, and the times are
drawn as fixed strings. Update after a reviewed change with
`pytest tests/tui/history/test_history_snapshots.py --snapshot-update`.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path

import pytest
from textual.pilot import Pilot

import pct_tui.screens.history.call as call_screen
import pct_tui.screens.history.screen as history_screen
from tests.tui.history.journal_fill import apply_and_record, call, record
from tests.tui.test_tui_snapshots import (
    AGENT,
    Snap,
    agent,  # noqa: F401 (a fixture)
    make_app,
    ready,
    size,  # noqa: F401 (a fixture)
    still,
)

PATCH = (
    "*** Begin Patch\n*** Add File: notes/todo.md\n+# Todo\n*** Update File: src/app.py\n"
    '@@ def main():\n-    print("hello")\n+    print("hello, console")\n*** End Patch'
)


@pytest.fixture
def fixed_times(agent: Path, monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: F811
    """Times as the same strings on every run, whatever the machine's clock and zone."""
    seen: dict[float, int] = {}  # drawn newest first: 12:00:59, 12:00:58, … on every redraw
    monkeypatch.setattr(
        history_screen, "call_time", lambda t: f"12:00:{59 - seen.setdefault(t, len(seen)):02d}"
    )
    monkeypatch.setattr(call_screen, "full_time", lambda _t: "2026-12-01 12:00:00")


def fill_journal() -> None:
    project = AGENT.parent / "project"
    (project / "src").mkdir(parents=True)
    (project / "src" / "app.py").write_text('def main():\n    print("hello")\n')
    record(
        AGENT,
        call(call_id="c-0000000001", summary="ls src", result="app.py", when=1.0),
        call(
            "apply_patch",
            call_id="c-0000000002",
            outcome="error",
            error_code="verification-failed",
            summary="1 file(s): gone.txt",
            result="apply_patch verification failed: gone.txt does not exist.",
            when=2.0,
        ),
        call(
            "exec_command",
            call_id="c-0000000003",
            path="nested",
            parent_call_id="c-0000000009",
            summary="pytest -q tests/test_app.py",
            result="1 passed",
            duration_ms=2400.0,
            when=3.0,
        ),
    )
    apply_and_record(
        AGENT, project, PATCH, session="pct-session-beta", call_id="c-0000000004", when=4.0
    )


def run(*keys: str, calls: bool = True) -> Callable[[Pilot[None]], Awaitable[None]]:
    async def before(pilot: Pilot[None]) -> None:
        await ready(pilot)
        if calls:
            fill_journal()
        await pilot.press("6")
        screen = pilot.app.screen
        assert isinstance(screen, history_screen.HistoryScreen)
        want = 4 if calls else 0
        for _ in range(500):
            if len(screen.records) == want and screen.query_one("#history-table"):
                break
            await pilot.pause(0.01)
        for key in keys:
            await pilot.press(key)
            await pilot.pause()
        await pilot.pause(0.2)  # the diff is read off the loop
        await still(pilot)

    return before


def test_history_empty(snap_compare: Snap, fixed_times: None, size: tuple[int, int]) -> None:  # noqa: F811
    assert snap_compare(make_app(), run_before=run(calls=False), terminal_size=size)


def test_history(snap_compare: Snap, fixed_times: None, size: tuple[int, int]) -> None:  # noqa: F811
    assert snap_compare(make_app(), run_before=run(), terminal_size=size)


def test_history_patch_call(snap_compare: Snap, fixed_times: None, size: tuple[int, int]) -> None:  # noqa: F811
    assert snap_compare(make_app(), run_before=run("enter"), terminal_size=size)


def test_history_undo_confirmation(
    snap_compare: Snap,
    fixed_times: None,
    size: tuple[int, int],  # noqa: F811
) -> None:
    assert snap_compare(make_app(), run_before=run("u"), terminal_size=size)
