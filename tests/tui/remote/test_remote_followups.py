"""Live control in the console, against the live-client double: a `--monitor`
console shows another runtime's question read-only (who asks, the diff, no answer keys)
and closes it when it is answered elsewhere; a remote approval draws each file's
operation as the embedded modal does; remote events keep the runtime's own time."""

from __future__ import annotations

import time
from pathlib import Path

from textual.widgets import Button, Static

from pct_runtime.serve.client.live_client import DiffInfo
from pct_tui.screens.approval import WATCH_NOTE, ConfirmScreen, WatchScreen
from pct_tui.screens.help import MONITOR_TEXT, HelpScreen
from tests.tui.conftest import started, text, wait_for
from tests.tui.remote.helpers import agent_runtime, connected, make

DIFFS = (
    DiffInfo("docs/new.md", "--- /dev/null\n+++ b/docs/new.md\n@@ -0,0 +1 @@\n+fresh", "add"),
    DiffInfo("old.txt", "--- a/old.txt\n+++ /dev/null\n@@ -1 +0,0 @@\n-gone", "delete"),
    DiffInfo("src/b.py", "--- a/src/a.py\n+++ b/src/b.py\n@@ -1 +1 @@\n-x\n+y", "move", "src/a.py"),
)
PREVIEW = (
    "- add docs/new.md\n- delete old.txt\n- move src/a.py -> src/b.py\n\n"
    "*** Begin Patch\n*** Add File: docs/new.md\n+fresh\n*** Delete File: old.txt\n"
    "*** Update File: src/a.py\n*** Move to: src/b.py\n@@\n-x = 1\n+x = 2\n*** End Patch"
)


async def test_monitor_shows_a_question_read_only_until_answered_elsewhere(
    agent_dir: Path, tmp_path: Path
) -> None:
    app, backend = make(agent_dir, tmp_path, monitor=True)
    async with app.run_test(size=(120, 40)) as pilot:
        await started(app, pilot)
        runtime = agent_runtime(backend)
        await wait_for(pilot, lambda: runtime.roles == ["monitor"], "monitor connected")
        runtime.ask("req-1", "Code Mode: apply patch?", PREVIEW, diffs=DIFFS)
        await wait_for(pilot, lambda: isinstance(app.screen, WatchScreen), "read-only modal")
        assert text(app, "#question-who").startswith("Asked by pct serve pid 4242 (stdio)")
        assert text(app, "#watch-note") == WATCH_NOTE
        assert "+fresh" in text(app, "#patch-diff")
        assert [b.id for b in app.screen.query(Button)] == ["hide"]  # no Yes / No
        await pilot.press("y", "n")
        await pilot.pause(0.2)
        assert isinstance(app.screen, WatchScreen)  # the answer keys do nothing here
        assert runtime.answers == {}
        runtime.close_request("req-1", "answered")  # a console answered it
        await wait_for(pilot, lambda: not isinstance(app.screen, WatchScreen), "closed")
        assert len(app.approvals) == 0

        runtime.ask("req-2", "Computer Use access", "Allow Safari?")
        await wait_for(pilot, lambda: isinstance(app.screen, WatchScreen), "second")
        await pilot.press("escape")  # hidden here only
        await wait_for(pilot, lambda: not isinstance(app.screen, WatchScreen), "hidden")
        assert runtime.answers == {}
        assert "req-2" in runtime.pending
        events = [r.text for r in app.console_state.events if r.kind == "approval"]
        assert any(e.startswith("asked (read-only here): Code Mode: apply patch?") for e in events)


async def test_a_remote_patch_is_drawn_with_each_files_operation(
    agent_dir: Path, tmp_path: Path
) -> None:
    app, backend = make(agent_dir, tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        await started(app, pilot)
        runtime = agent_runtime(backend)
        await wait_for(pilot, lambda: runtime.roles == ["console"], "console connected")
        runtime.ask("req-1", "Code Mode: apply patch?", PREVIEW, diffs=DIFFS)
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmScreen), "modal")
        screen = app.screen
        assert isinstance(screen, ConfirmScreen)
        assert screen.diffs is not None
        assert [(d.operation, d.path, d.source) for d in screen.diffs] == [
            ("add", "docs/new.md", None),
            ("delete", "old.txt", None),
            ("move", "src/b.py", "src/a.py"),
        ]
        assert text(app, "#patch-files") == (
            "- add docs/new.md\n- delete old.txt\n- move src/a.py -> src/b.py"
        )
        await pilot.press("n")
        await wait_for(pilot, lambda: runtime.answers == {"req-1": False}, "denied")


async def test_remote_events_show_the_runtimes_own_time(agent_dir: Path, tmp_path: Path) -> None:
    app, backend = make(agent_dir, tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        await started(app, pilot)
        runtime = agent_runtime(backend)
        await connected(pilot, app)
        runtime.event("runtime", "call-started tool=exec_command")  # at 1_700_000_000
        await wait_for(
            pilot,
            lambda: any("call-started" in r.text for r in app.console_state.events),
            "event",
        )
        (record,) = [r for r in app.console_state.events if "call-started" in r.text]
        assert record.clock == time.strftime("%H:%M:%S", time.localtime(1_700_000_000.0))


async def test_help_says_a_monitor_is_read_only(agent_dir: Path, tmp_path: Path) -> None:
    app, _ = make(agent_dir, tmp_path, monitor=True)
    async with app.run_test(size=(100, 40)) as pilot:
        await started(app, pilot)
        await pilot.press("question_mark")
        await wait_for(pilot, lambda: isinstance(app.screen, HelpScreen), "help")
        shown = str(app.screen.query_one("#help-dialog Static", Static).render())
        assert shown.startswith(MONITOR_TEXT)
        assert "pct-tui --monitor: questions are shown read-only (esc Hide)" in shown
