"""An agent's own stdio `pct serve` and a console on the same agent dir: the console lists
the agent's session and shell job, streams its output from that process, and stops it;
it approves and denies a nested patch of the agent's Code Mode cell, and when it quits with
a question open the cell gets `approval-unavailable` promptly.

The agent is this test, driving a real `pct serve` subprocess with the MCP client; the
console is the real app (Pilot) with the real live-control client.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from pct_procs import PCT, child_env, text_of, write_config
from textual.widgets import DataTable

from pct_tui.app import PctApp
from pct_tui.screens.approval import ConfirmScreen
from pct_tui.screens.output import OutputScreen
from pct_tui.widgets.output_log import OutputLog
from tests.tui.conftest import show, started, wait_for

pytestmark = pytest.mark.e2e


@pytest.fixture(autouse=True)
def _no_key_guard(monkeypatch: pytest.MonkeyPatch) -> None:
    # Pilot presses come at once; the keystroke guard has its own test (test_modal_guard).
    monkeypatch.setattr(ConfirmScreen, "GUARD_SECONDS", 0.0)


SCRIPT = "for i in $(seq 1 40); do echo line-$i; sleep 0.02; done; echo all-printed; sleep 60"


async def test_console_lists_streams_and_stops_an_agents_stdio_job(
    dirs: tuple[Path, Path],
) -> None:
    agent, work = dirs
    server = StdioServerParameters(command=PCT, args=["serve"], env=child_env(agent), cwd=work)
    async with Client(server, mode="legacy") as client:
        ran = await client.call_tool("exec_command", {"cmd": SCRIPT, "yield_time_ms": 250})
        assert ran.meta is not None
        job = ran.meta["pct/details"]["session_id"]
        app = PctApp(agent_dir=agent, serve=False, watch=False, cwd=work)
        async with app.run_test(size=(140, 40)) as pilot:
            await started(app, pilot)
            await show(app, pilot, "4", "sessions")
            table = app.screen.query_one("#work-table", DataTable)

            def keys() -> list[str]:
                return [str(k.value) for k in table.rows]

            await wait_for(pilot, lambda: any(k.endswith(f"|shell:{job}") for k in keys()), "job")
            rows = keys()
            assert rows[0] == "runtime:local"
            assert rows[1].endswith("|runtime")
            assert str(table.get_row_at(1)[1]) == "pct serve (stdio)"
            assert "|session:" in rows[2]
            index = next(i for i, k in enumerate(rows) if k.endswith(f"|shell:{job}"))
            assert str(table.get_row_at(index)[2]) == "running"

            table.move_cursor(row=index)
            await pilot.press("enter")
            await wait_for(pilot, lambda: isinstance(app.screen, OutputScreen), "viewer")
            log = app.screen.query_one(OutputLog)
            await wait_for(pilot, lambda: "all-printed" in log.lines, "the whole output")
            assert [line for line in log.lines if line.startswith("line-")] == [
                f"line-{n}" for n in range(1, 41)
            ]
            await pilot.press("escape")
            await wait_for(pilot, lambda: not isinstance(app.screen, OutputScreen), "back")

            table.move_cursor(row=index)
            await pilot.press("x")
            await wait_for(pilot, lambda: isinstance(app.screen, ConfirmScreen), "confirm")
            await pilot.press("y")
            await wait_for(
                pilot,
                lambda: str(table.get_row_at(keys().index(rows[index]))[2]) == "terminated",
                "terminated in the table",
            )
            # An ended job's viewer still gets its whole output, then the end.
            table.move_cursor(row=keys().index(rows[index]))
            await pilot.press("enter")
            await wait_for(pilot, lambda: isinstance(app.screen, OutputScreen), "viewer again")
            log = app.screen.query_one(OutputLog)
            await wait_for(pilot, lambda: "all-printed" in log.lines, "output of an ended job")
            assert not any("lost" in line for line in log.lines)
        polled = await client.call_tool("write_stdin", {"session_id": job, "chars": ""})
        assert "terminated" in text_of(polled) or "exited" in text_of(polled)


PATCH = "*** Begin Patch\n*** Add File: notes/todo.md\n+first line\n*** End Patch"
DENIED = "*** Begin Patch\n*** Add File: denied.txt\n+no\n*** End Patch"
PENDING = "*** Begin Patch\n*** Add File: pending.txt\n+no\n*** End Patch"


async def test_console_answers_an_agents_nested_patch_and_quitting_falls_back(
    dirs: tuple[Path, Path],
) -> None:
    agent, work = dirs
    write_config(
        agent,
        {
            "applyPatch": {"enabled": True},
            "shellSessions": {"enabled": True},
            "codeMode": {"enabled": True, "approvalMode": "confirm"},
        },
    )
    server = StdioServerParameters(command=PCT, args=["serve"], env=child_env(agent), cwd=work)
    async with Client(server, mode="legacy") as client:
        await client.list_tools()
        app = PctApp(agent_dir=agent, serve=False, watch=False, cwd=work)
        async with app.run_test(size=(140, 40)) as pilot:
            await started(app, pilot)
            await wait_for(pilot, lambda: any(r.snapshot for r in app.remotes.all()), "connected")

            async def ask(patch: str) -> asyncio.Future[Any]:
                code = f"await tools.apply_patch({patch!r})"
                call = asyncio.ensure_future(client.call_tool("exec", {"code": code}))
                await wait_for(
                    pilot,
                    lambda: (
                        isinstance(app.screen, ConfirmScreen)
                        and bool(app.screen.query("#patch-diff"))
                    ),
                    "modal",
                )
                return call

            call = await ask(PATCH)
            who = str(app.screen.query_one("#question-who").render())
            assert who.startswith("Asked by pct serve pid ")
            assert "(stdio) · session " in who
            assert "+first line" in str(app.screen.query_one("#patch-diff").render())
            assert not (work / "notes").exists()
            await pilot.press("y")
            result = await asyncio.wait_for(call, 30)
            assert not result.is_error, text_of(result)
            assert (work / "notes" / "todo.md").read_text() == "first line\n"

            call = await ask(DENIED)
            await pilot.press("n")
            result = await asyncio.wait_for(call, 30)
            assert "approval-denied" in text_of(result)
            assert not (work / "denied.txt").exists()

            call = await ask(PENDING)
            await app.shutdown()  # the console quits with the question open
            result = await asyncio.wait_for(call, 15)  # promptly, not the approval timeout
            assert "approval-unavailable" in text_of(result)
            assert not (work / "pending.txt").exists()


async def test_runtimes_appear_and_disappear_as_agents_start_and_end(
    dirs: tuple[Path, Path],
) -> None:
    agent, work = dirs
    app = PctApp(agent_dir=agent, serve=False, watch=False, cwd=work)
    async with app.run_test(size=(140, 40)) as pilot:
        await started(app, pilot)
        assert app.remotes.all() == []
        server = StdioServerParameters(command=PCT, args=["serve"], env=child_env(agent), cwd=work)
        async with Client(server, mode="legacy") as client:
            await client.list_tools()
            await wait_for(pilot, lambda: len(app.remotes.all()) == 1, "the agent's runtime")
            (runtime,) = app.remotes.all()
            await wait_for(pilot, lambda: len(runtime.sessions) == 1, "its session")
            assert runtime.label.startswith("pct serve pid ")
            assert runtime.label.endswith(" (stdio)")
        await wait_for(pilot, lambda: app.remotes.all() == [], "gone when the agent ends")
        events = [r.text for r in app.console_state.events]
        assert any(e == f"{runtime.label} ended" for e in events)
