"""SVG snapshots of Status and Sessions with another runtime connected (an agent's stdio
`pct serve`, played by the live-client double with a fixed pid), at 80×24 and 160×48.

Same fixed agent dir, clock and two-equal-frames wait as `test_tui_snapshots.py`. Update
after a reviewed change with
`pytest tests/tui/test_tui_remote_snapshots.py --snapshot-update`.
"""

from __future__ import annotations

from pathlib import Path

from textual.pilot import Pilot
from textual.widgets import OptionList

from pct_runtime.serve.client.live_client import DiffInfo
from pct_tui.app import PctApp
from pct_tui.screens.approval import ConfirmScreen, WatchScreen
from pct_tui.serving import AttachInfo, attach_commands
from tests.tui.remote.live_double import DoubleBackend, DoubleRuntime
from tests.tui.test_tui_snapshots import (
    AGENT,
    URL,
    Before,
    Snap,
    agent,
    config,
    size,
    steps,
)

__all__ = ["agent", "size"]  # fixtures used below

STATUS = (
    "pct serve (pid 4242, stdio)\n"
    "Apply Patch:\n  configured: on\n  effective: active\n  reason: \n"
    "Shell Sessions:\n  configured: on\n  effective: active\n  reason: "
)


def make_app(*, monitor: bool = False) -> tuple[PctApp, DoubleBackend]:
    backend = DoubleBackend()
    runtime = backend.add(DoubleRuntime(4242))
    runtime.status_text = STATUS
    runtime.open_session("pct-session-agent")
    runtime.start_work("job-agent-1", "pct-session-agent")
    runtime.start_work("cell-agent-2", "pct-session-agent", kind="cell")
    app = PctApp(
        agent_dir=AGENT,
        serve=False,
        watch=False,
        attach_info=AttachInfo(URL, "~/.pi/agent/pct/token", attach_commands(URL)),
        clock=lambda: "12:00:00",
        cwd=AGENT.parent,
        live=backend,
        monitor=monitor,
    )
    app.NOTIFICATION_TIMEOUT = 3600
    return app, backend


async def _connected(pilot: Pilot[None]) -> None:
    app = pilot.app
    assert isinstance(app, PctApp)
    while not any(r.rows for r in app.remotes.all()):
        await pilot.pause(0.01)
    await pilot.pause()


def _highlight(label: str) -> Before:
    async def run(pilot: Pilot[None]) -> None:
        await _connected(pilot)
        options = pilot.app.screen.query_one("#status-sessions", OptionList)
        prompts = [str(options.get_option_at_index(i).prompt) for i in range(options.option_count)]
        options.highlighted = prompts.index(label)
        await pilot.pause()

    return run


def test_status_with_another_runtime(
    snap_compare: Snap, agent: Path, size: tuple[int, int]
) -> None:
    config({"applyPatch": {"enabled": True}})
    app, _ = make_app()
    before = steps(then=_highlight("pct serve pid 4242 (stdio)"))
    assert snap_compare(app, run_before=before, terminal_size=size)


def test_sessions_with_another_runtime(
    snap_compare: Snap, agent: Path, size: tuple[int, int]
) -> None:
    config({"shellSessions": {"enabled": True}})
    app, _ = make_app()
    before = steps("4", "down", "down", "down", then=_connected)
    assert snap_compare(app, run_before=before, terminal_size=size)


PATCH_DIFFS = (
    DiffInfo("docs/new.md", "--- /dev/null\n+++ b/docs/new.md\n@@ -0,0 +1 @@\n+fresh", "add"),
    DiffInfo("old.txt", "--- a/old.txt\n+++ /dev/null\n@@ -1 +0,0 @@\n-gone", "delete"),
    DiffInfo(
        "src/b.py",
        "--- a/src/a.py\n+++ b/src/b.py\n@@ -1 +1 @@\n-x = 1\n+x = 2",
        "move",
        "src/a.py",
    ),
)
PATCH_PREVIEW = (
    "- add docs/new.md\n- delete old.txt\n- move src/a.py -> src/b.py\n\n"
    "*** Begin Patch\n*** Add File: docs/new.md\n+fresh\n*** Delete File: old.txt\n"
    "*** Update File: src/a.py\n*** Move to: src/b.py\n@@\n-x = 1\n+x = 2\n*** End Patch"
)


def _asked(backend: DoubleBackend, screen: type) -> Before:
    async def run(pilot: Pilot[None]) -> None:
        await _connected(pilot)
        (runtime,) = backend.runtimes.values()
        runtime.ask("req-1", "Code Mode: apply patch?", PATCH_PREVIEW, diffs=PATCH_DIFFS)
        while not isinstance(pilot.app.screen, screen):
            await pilot.pause(0.01)
        await pilot.pause()

    return run


def test_remote_patch_approval(snap_compare: Snap, agent: Path, size: tuple[int, int]) -> None:
    config({"shellSessions": {"enabled": True}})
    app, backend = make_app()
    before = steps(then=_asked(backend, ConfirmScreen))
    assert snap_compare(app, run_before=before, terminal_size=size)


def test_monitor_shows_a_question_read_only(
    snap_compare: Snap, agent: Path, size: tuple[int, int]
) -> None:
    config({"shellSessions": {"enabled": True}})
    app, backend = make_app(monitor=True)
    before = steps(then=_asked(backend, WatchScreen))
    assert snap_compare(app, run_before=before, terminal_size=size)
