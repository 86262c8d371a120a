"""Pilot tests of the console's view of other runtimes, against the live-client double:
grouping by runtime, streaming output, stopping and ending remotely (and failures),
remote approvals in the one queue, a runtime going away, and `--monitor` refusals."""

from __future__ import annotations

import asyncio
import dataclasses
from pathlib import Path

from textual.widgets import DataTable, OptionList

from pct_runtime.host.ui import Question
from pct_runtime.serve.client.live_client import DiffInfo
from pct_tui.screens.approval import ChoiceScreen, ConfirmScreen, WatchScreen
from tests.tui.conftest import show, started, text, wait_for
from tests.tui.remote.helpers import (
    agent_rows,
    agent_runtime,
    connected,
    keys,
    make,
    notes,
    open_job_output,
)
from tests.tui.remote.live_double import REFUSED, DoubleRuntime


async def test_sessions_and_status_group_every_runtime(agent_dir: Path, tmp_path: Path) -> None:
    app, backend = make(agent_dir, tmp_path)
    async with app.run_test(size=(140, 40)) as pilot:
        await started(app, pilot)
        runtime = agent_runtime(backend)
        other = backend.add(DoubleRuntime(5151, transport="http"))
        other.open_session("pct-session-http", client="claude-code", version="2.1")
        await show(app, pilot, "4", "sessions")
        await wait_for(pilot, lambda: len(keys(app)) == 6, "two runtimes' rows")
        rows = keys(app)
        assert rows[0] == "runtime:local"
        assert rows[1].endswith("4242.json|runtime")
        assert rows[2].endswith("|session:pct-session-agent")
        assert rows[3].endswith("|shell:job-1")
        assert rows[4].endswith("5151.json|runtime")
        assert rows[5].endswith("|session:pct-session-http")
        table = app.screen.query_one("#work-table", DataTable)
        header = [str(c) for c in table.get_row_at(1)]
        assert header == ["pid 4242", "pct serve (stdio)", "live", "", ""]
        assert [str(c) for c in table.get_row_at(2)][:4] == [
            "pct-session-agent",
            "session (stdio)",
            "open",
            "",
        ]
        assert str(table.get_row_at(3)[2]) == "running"
        await pilot.press("down", "down")
        assert "client codex-mcp-client 0.5.0" in text(app, "#work-detail")
        await pilot.press("down")
        assert "pct serve pid 4242 (stdio): job job-1" in text(app, "#work-detail")
        await runtime.finish("job-1", exit_code=3)
        await wait_for(pilot, lambda: str(table.get_row_at(3)[2]) == "completed", "completed")
        assert str(table.get_row_at(3)[3]) == "3"
        assert backend.excluded
        assert backend.excluded[0] is not None

        await show(app, pilot, "1", "status")
        options = app.screen.query_one("#status-sessions", OptionList)
        labels = [str(options.get_option_at_index(i).prompt) for i in range(options.option_count)]
        assert "pct serve pid 4242 (stdio)" in labels
        assert "  pct-session-http · —" in labels
        options.highlighted = labels.index("pct serve pid 4242 (stdio)")
        await pilot.pause()
        assert text(app, "#status-text") == runtime.status_text
        options.highlighted = labels.index("  pct-session-http · —")
        await pilot.pause()
        assert "client claude-code 2.1" in text(app, "#status-tools")


async def test_output_streams_from_the_owning_runtime_without_loss(
    agent_dir: Path, tmp_path: Path
) -> None:
    app, backend = make(agent_dir, tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        await started(app, pilot)
        runtime = agent_runtime(backend)
        await runtime.write("job-1", "before the viewer opened\n")
        log = await open_job_output(pilot, app)
        expected = "before the viewer opened\n"
        for n in range(300):  # many chunks, faster than frames
            line = f"line {n:04d} " + "x" * 200 + "\n"
            expected += line
            await runtime.write("job-1", line)
        await runtime.finish("job-1")
        await wait_for(pilot, lambda: log.written == len(expected), "every character")
        assert "\n".join(log.lines) == expected

        def title() -> str:
            return str(app.screen.query_one("#output-title").render())

        await wait_for(pilot, lambda: "completed" in title(), "title follows the state")
        assert "pct serve pid 4242 (stdio)" in title()


async def test_stop_and_end_remotely_confirmed_and_failures_shown(
    agent_dir: Path, tmp_path: Path
) -> None:
    app, backend = make(agent_dir, tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        await started(app, pilot)
        runtime = agent_runtime(backend)
        await agent_rows(pilot, app)
        table = app.screen.query_one("#work-table", DataTable)
        await pilot.press("down", "down", "down", "x")
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmScreen), "confirmation")
        assert str(app.screen.query_one("#question-title").render()) == "Stop shell job job-1?"
        message = str(app.screen.query_one("#question-message").render())
        assert message.startswith("It runs in pct serve pid 4242 (stdio). The process group")
        await pilot.press("n")
        await pilot.pause()
        assert runtime.stopped == []
        await pilot.press("x")
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmScreen), "confirmation")
        await pilot.press("y")
        await wait_for(pilot, lambda: str(table.get_row_at(3)[2]) == "terminated", "stopped")
        assert runtime.stopped == ["job-1"]

        runtime.refuse_acts = "session pct-session-agent is busy"
        await pilot.press("up", "T")
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmScreen), "confirmation")
        await pilot.press("y")
        await wait_for(
            pilot,
            lambda: "Session not ended: session pct-session-agent is busy" in notes(app),
            "failure shown",
        )
        runtime.refuse_acts = None
        await pilot.press("T")
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmScreen), "confirmation")
        await pilot.press("y")
        await wait_for(pilot, lambda: runtime.ended == ["pct-session-agent"], "ended")
        await wait_for(pilot, lambda: not any("session:" in k for k in keys(app)[1:]), "gone")


async def test_remote_approvals_join_the_queue_and_close_when_answered_elsewhere(
    agent_dir: Path, tmp_path: Path
) -> None:
    app, backend = make(agent_dir, tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        await started(app, pilot)
        runtime = agent_runtime(backend)
        await connected(pilot, app)
        await wait_for(pilot, lambda: runtime.roles == ["console"], "console role")
        diff = "--- a/src/app.py\n+++ b/src/app.py\n@@ -1 +1 @@\n-old\n+new"
        runtime.ask(
            "req-1",
            "Code Mode: apply patch?",
            "update src/app.py\n\n*** Begin Patch\n*** End Patch",
            diffs=(DiffInfo("src/app.py", diff),),
        )
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmScreen), "modal")
        assert text(app, "#question-who") == (
            "Asked by pct serve pid 4242 (stdio) · session pct-session-agent · client "
            "codex-mcp-client 0.5.0 · model —"
        )
        assert "+new" in str(app.screen.query_one("#patch-diff").render())
        await pilot.press("y")
        await wait_for(pilot, lambda: runtime.answers == {"req-1": True}, "answered yes")
        assert not isinstance(app.screen, ConfirmScreen)

        runtime.ask("req-2", "Code Mode: apply patch?", "delete a.txt")
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmScreen), "second modal")
        runtime.close_request("req-2", "answered")  # another console was first
        await wait_for(pilot, lambda: not isinstance(app.screen, ConfirmScreen), "closed")
        assert "req-2" not in runtime.answers
        assert len(app.approvals) == 0

        runtime.ask("req-3", "Computer Use access", "Allow Safari?")
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmScreen), "third modal")
        backend.remove(runtime)
        await wait_for(pilot, lambda: not isinstance(app.screen, ConfirmScreen), "gone closes")
        assert runtime.answers.keys() == {"req-1"}
        await show(app, pilot, "4", "sessions")
        assert keys(app) == []
        events = [r.text for r in app.console_state.events]
        assert any("pct serve pid 4242 (stdio) ended" in e for e in events)


async def test_events_of_other_runtimes_are_labelled(agent_dir: Path, tmp_path: Path) -> None:
    app, backend = make(agent_dir, tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        await started(app, pilot)
        runtime = agent_runtime(backend)
        await connected(pilot, app)
        runtime.event("runtime", "call-started tool=exec_command")
        await wait_for(
            pilot,
            lambda: any(
                r.kind == "runtime"
                and r.text == "[pct serve pid 4242 (stdio)] call-started tool=exec_command"
                for r in app.console_state.events
            ),
            "labelled event",
        )


async def test_quitting_leaves_remote_requests_unanswered(agent_dir: Path, tmp_path: Path) -> None:
    app, backend = make(agent_dir, tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        await started(app, pilot)
        runtime = agent_runtime(backend)
        await connected(pilot, app)
        runtime.ask("req-1", "Computer Use access", "Allow Safari?")
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmScreen), "modal")
        await app.shutdown()
        await pilot.pause()
    assert runtime.answers == {}  # the runtime falls back to its next route itself
    assert runtime.clients == []


async def test_monitor_watches_and_refuses_every_act(agent_dir: Path, tmp_path: Path) -> None:
    app, backend = make(agent_dir, tmp_path, monitor=True)
    assert app.serving is None
    async with app.run_test(size=(120, 40)) as pilot:
        await started(app, pilot)
        assert "monitor (read-only)" in app.title
        assert "Monitor (read-only)" in text(app, "#attach")
        runtime = agent_runtime(backend)
        await agent_rows(pilot, app)
        assert runtime.roles == ["monitor"]
        await pilot.press("down", "down", "down", "x")
        await wait_for(pilot, lambda: any("does not stop work" in n for n in notes(app)), "x")
        assert not isinstance(app.screen, ConfirmScreen)
        await pilot.press("T")
        await wait_for(pilot, lambda: any("does not end sessions" in n for n in notes(app)), "T")
        assert runtime.stopped == []
        assert runtime.ended == []
        runtime.ask("req-1", "Computer Use access", "Allow Safari?")  # shown, not answerable
        await wait_for(pilot, lambda: isinstance(app.screen, WatchScreen), "read-only modal")
        await pilot.press("y")
        await pilot.pause(0.2)
        assert not isinstance(app.screen, ConfirmScreen)
        assert runtime.answers == {}
        await pilot.press("escape")
        outcome = await app.console_state.save()
        assert not outcome.ok
        assert outcome.code == "read-only"
        assert not (agent_dir / "extensions" / "pi-codex-toolkit.json").exists()
        assert REFUSED in (await runtime.clients[0].stop("job-1")).message


async def test_an_open_viewer_says_when_its_runtime_goes_away(
    agent_dir: Path, tmp_path: Path
) -> None:
    app, backend = make(agent_dir, tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        await started(app, pilot)
        runtime = agent_runtime(backend)
        await runtime.write("job-1", "still running\n")
        log = await open_job_output(pilot, app)
        await wait_for(pilot, lambda: "still running" in log.lines, "output")
        backend.remove(runtime)
        await wait_for(
            pilot,
            lambda: any("output stream of pct serve pid 4242 (stdio) lost" in s for s in log.lines),
            "the loss is said",
        )
        await wait_for(
            pilot, lambda: "· gone ·" in str(app.screen.query_one("#output-title").render()), "gone"
        )


async def test_a_dropped_connection_to_a_running_runtime_is_made_again(
    agent_dir: Path, tmp_path: Path
) -> None:
    app, backend = make(agent_dir, tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        await started(app, pilot)
        runtime = agent_runtime(backend)
        await wait_for(pilot, lambda: len(runtime.clients) == 1, "connected")
        first = runtime.clients[0]
        runtime.ask("req-1", "Computer Use access", "Allow Safari?")
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmScreen), "modal")
        runtime.drop_connections()
        await wait_for(pilot, lambda: not isinstance(app.screen, ConfirmScreen), "modal closed")
        await wait_for(
            pilot, lambda: len(runtime.clients) == 1 and runtime.clients[0] is not first, "again"
        )
        await show(app, pilot, "4", "sessions")
        await wait_for(pilot, lambda: len(keys(app)) == 4, "rows back")
        events = [r.text for r in app.console_state.events]
        assert any(
            "pct serve pid 4242 (stdio) connection closed; reconnecting" in e for e in events
        )
        assert runtime.answers == {}


async def test_a_remote_pick_says_who_asks_and_sends_the_choice(
    agent_dir: Path, tmp_path: Path
) -> None:
    app, backend = make(agent_dir, tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        await started(app, pilot)
        runtime = agent_runtime(backend)
        await connected(pilot, app)
        runtime.ask("req-pick", "Pick a display", "", options=("Main", "Side"))
        await wait_for(pilot, lambda: isinstance(app.screen, ChoiceScreen), "picker")
        await wait_for(pilot, lambda: bool(app.screen.query("#choice-note")), "note")
        assert text(app, "#choice-note").startswith("Asked by pct serve pid 4242 (stdio)")
        await pilot.press("down", "enter")
        await wait_for(pilot, lambda: runtime.answers == {"req-pick": "Side"}, "picked")


async def test_a_runtime_without_live_control_is_named_not_retried(
    agent_dir: Path, tmp_path: Path
) -> None:
    app, backend = make(agent_dir, tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        await started(app, pilot)
        old = DoubleRuntime(3131)
        old.entry = dataclasses.replace(old.entry, live=0)
        backend.add(old)
        await wait_for(
            pilot,
            lambda: any("predates live control" in r.text for r in app.console_state.events),
            "named",
        )
        assert old.clients == []
        assert app.remotes.all() == []


async def test_every_runtimes_questions_wait_in_one_queue_in_arrival_order(
    agent_dir: Path, tmp_path: Path
) -> None:
    """Another runtime's question and this console's own share the one queue: shown in
    the order they came, a re-sent one queued once, each answer going back to its asker."""
    app, backend = make(agent_dir, tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        await started(app, pilot)
        runtime = agent_runtime(backend)
        await connected(pilot, app)
        await wait_for(pilot, lambda: runtime.roles == ["console"], "console role")
        asked = runtime.ask("req-1", "Computer Use access", "Allow Safari?")
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmScreen), "remote modal")
        own = asyncio.ensure_future(app.ui.confirm(Question("Computer Use access", "Allow Notes?")))
        runtime.publish(asked)  # a question is re-sent to a new subscriber
        await wait_for(pilot, lambda: len(app.approvals) == 2, "both waiting")
        await pilot.pause(0.05)
        assert len(app.approvals) == 2  # the re-sent one is not queued twice
        assert text(app, "#question-message") == "Allow Safari?"
        await pilot.press("n")
        await wait_for(pilot, lambda: runtime.answers == {"req-1": False}, "remote answered")
        await wait_for(
            pilot, lambda: "Allow Notes?" in text(app, "#question-message"), "own question next"
        )
        await pilot.press("y")
        assert await asyncio.wait_for(own, 10) is True
        assert len(app.approvals) == 0
        assert runtime.answers == {"req-1": False}
