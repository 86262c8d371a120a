"""The live viewer can be read back while a job writes: scrolling up pauses following
(the title says so), `f` or End follows again."""

from __future__ import annotations

from pathlib import Path

from textual.widgets import Static

from tests.tui.conftest import started, wait_for
from tests.tui.remote.helpers import agent_runtime, connected, make, open_job_output


async def test_scrolling_up_pauses_following_and_f_resumes(agent_dir: Path, tmp_path: Path) -> None:
    app, backend = make(agent_dir, tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        await started(app, pilot)
        runtime = agent_runtime(backend)
        await connected(pilot, app)
        log = await open_job_output(pilot, app)
        await runtime.write("job-1", "".join(f"line {i}\n" for i in range(200)))
        await wait_for(pilot, lambda: log.line_count >= 200, "output")
        await wait_for(pilot, lambda: log.scroll_y == log.max_scroll_y, "following")
        log.focus()
        await pilot.press("pageup")
        await wait_for(pilot, lambda: not log.following, "paused")
        title = lambda: str(app.screen.query_one("#output-title", Static).render())  # noqa: E731
        assert "paused: f or End follows" in title()
        held = log.scroll_y
        await runtime.write("job-1", "".join(f"more {i}\n" for i in range(100)))
        await wait_for(pilot, lambda: log.line_count >= 300, "more output")
        assert log.scroll_y == held  # what the operator reads stays put
        await pilot.press("f")
        await wait_for(pilot, lambda: log.following and log.scroll_y == log.max_scroll_y, "end")
        assert "paused" not in title()
