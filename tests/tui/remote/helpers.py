"""Set-up shared by the console's remote pilot tests: a console on the live-client double,
an agent runtime with one session and one shell job, and the Sessions steps they repeat."""

from __future__ import annotations

from pathlib import Path

from textual.pilot import Pilot
from textual.widgets import DataTable

from pct_tui.app import PctApp
from pct_tui.screens.output import OutputScreen
from pct_tui.widgets.output_log import OutputLog
from tests.tui.conftest import show, wait_for
from tests.tui.remote.live_double import DoubleBackend, DoubleRuntime


def make(agent_dir: Path, tmp_path: Path, *, monitor: bool = False) -> tuple[PctApp, DoubleBackend]:
    backend = DoubleBackend()
    app = PctApp(
        agent_dir=agent_dir, serve=False, watch=False, cwd=tmp_path, live=backend, monitor=monitor
    )
    app.NOTIFICATION_TIMEOUT = 60
    return app, backend


def agent_runtime(backend: DoubleBackend, pid: int = 4242) -> DoubleRuntime:
    runtime = backend.add(DoubleRuntime(pid))
    runtime.open_session("pct-session-agent")
    runtime.start_work("job-1", "pct-session-agent")
    return runtime


def keys(app: PctApp) -> list[str]:
    table = app.screen.query_one("#work-table", DataTable)
    return [str(key.value) for key in table.rows]


def notes(app: PctApp) -> list[str]:
    return [n.message for n in app._notifications]


async def connected(pilot: Pilot[None], app: PctApp) -> None:
    await wait_for(pilot, lambda: bool(app.remotes.all()), "connected")


async def agent_rows(pilot: Pilot[None], app: PctApp) -> None:
    """Sessions, showing the agent runtime's four rows (local, runtime, session, job)."""
    await show(app, pilot, "4", "sessions")
    await wait_for(pilot, lambda: len(keys(app)) == 4, "rows")


async def open_job_output(pilot: Pilot[None], app: PctApp) -> OutputLog:
    """The output viewer of the agent runtime's job-1, opened from Sessions."""
    await agent_rows(pilot, app)
    await pilot.press("down", "down", "down", "enter")
    await wait_for(pilot, lambda: isinstance(app.screen, OutputScreen), "viewer")
    return app.screen.query_one(OutputLog)
