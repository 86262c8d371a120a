"""SVG snapshots of the History screen at 80×24 and 160×48: the empty journal, a journal of
real calls, a patch call opened (its diff) and the undo confirmation.

Same fixed agent dir, lock and `still` wait as `tests/tui/test_tui_snapshots.py`; the call
times, durations and call ids are fixed here (the journal records real ones). Update after a
reviewed change with `pytest tests/tui/history/test_history_snapshots.py --snapshot-update`.
"""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest
from textual.pilot import Pilot

import pct_tui.screens.history as history_screen
import pct_tui.screens.history_call as call_screen
from pct_tui.app import PctApp
from tests.tui.test_tui_snapshots import (
    AGENT,
    Snap,
    agent,  # noqa: F401 (a fixture)
    config,
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
def fixed_calls(agent: Path, monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: F811
    """Times, durations and call ids as the same strings on every run."""
    seen: dict[float, int] = {}  # drawn newest first: 12:00:59, 12:00:58, … on every redraw
    monkeypatch.setattr(
        history_screen, "call_time", lambda t: f"12:00:{59 - seen.setdefault(t, len(seen)):02d}"
    )
    monkeypatch.setattr(history_screen, "duration", lambda _ms: "12 ms")
    monkeypatch.setattr(call_screen, "duration", lambda _ms: "12 ms")
    monkeypatch.setattr(call_screen, "full_time", lambda _t: "2026-12-01 12:00:00")
    ids = itertools.count(1)
    import pct_runtime.journal.store as store

    monkeypatch.setattr(store, "new_call_id", lambda: f"c-{next(ids):010d}")


async def _journal_some_calls(pilot: Pilot[None]) -> None:
    app = pilot.app
    assert isinstance(app, PctApp)
    project = AGENT.parent
    (project / "src").mkdir(exist_ok=True)
    (project / "src" / "app.py").write_text('def main():\n    print("hello")\n')
    session = await app.runtime.open_session("mcp", session_id="pct-session-demo")
    await session.call("exec_command", {"cmd": "ls src", "yield_time_ms": 3000})
    await session.call(
        "apply_patch", {"patch": "*** Begin Patch\n*** Delete File: gone.txt\n*** End Patch"}
    )
    await session.call("apply_patch", {"patch": PATCH})


def run(*keys: str, calls: bool = True) -> object:
    async def before(pilot: Pilot[None]) -> None:
        await ready(pilot)
        if calls:
            await _journal_some_calls(pilot)
        await pilot.press("6")
        screen = pilot.app.screen
        assert isinstance(screen, history_screen.HistoryScreen)
        for _ in range(500):  # the three calls are listed
            if len(screen.records) == (3 if calls else 0) and screen.query_one("#history-table"):
                break
            await pilot.pause(0.01)
        for key in keys:
            await pilot.press(key)
            await pilot.pause()
        await pilot.pause(0.2)  # the diff is read off the loop
        await still(pilot)

    return before


CONFIG = {"applyPatch": {"enabled": True}, "shellSessions": {"enabled": True}}


def test_history_empty(snap_compare: Snap, fixed_calls: None, size: tuple[int, int]) -> None:  # noqa: F811
    assert snap_compare(make_app(), run_before=run(calls=False), terminal_size=size)


def test_history(snap_compare: Snap, fixed_calls: None, size: tuple[int, int]) -> None:  # noqa: F811
    config(CONFIG)
    assert snap_compare(make_app(), run_before=run(), terminal_size=size)


def test_history_patch_call(snap_compare: Snap, fixed_calls: None, size: tuple[int, int]) -> None:  # noqa: F811
    config(CONFIG)
    assert snap_compare(make_app(), run_before=run("enter"), terminal_size=size)


def test_history_undo_confirmation(
    snap_compare: Snap,
    fixed_calls: None,
    size: tuple[int, int],  # noqa: F811
) -> None:
    config(CONFIG)
    assert snap_compare(make_app(), run_before=run("u"), terminal_size=size)
