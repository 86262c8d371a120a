"""Views follow the runtime: the status list and events log update from runtime events, the
output log keeps every byte of a batched stream, and the deferred editor validates."""

from __future__ import annotations

from pathlib import Path

from textual.widgets import OptionList, RichLog, Static

from pct_tui.app import PctApp
from tests.tui.conftest import wait_for


async def test_status_and_events_follow_runtime_events(agent_dir: Path) -> None:
    (agent_dir / "extensions" / "pi-codex-toolkit.json").write_text(
        '{"shellSessions": {"enabled": true}}\n'
    )
    app = PctApp(agent_dir=agent_dir, serve=False, watch=False)
    async with app.run_test(size=(130, 40)) as pilot:
        await wait_for(pilot, lambda: app.console_state.ready, "runtime start")
        sessions = app.screen.query_one("#status-sessions", OptionList)
        await wait_for(pilot, lambda: sessions.option_count == 1, "fresh row")
        session = await app.runtime.open_session("mcp", session_id="pct-session-live")
        await wait_for(pilot, lambda: sessions.option_count == 2, "session row")
        assert str(sessions.get_option_at_index(1).prompt) == "pct-session-live (mcp) · —"
        sessions.highlighted = 1
        await pilot.pause()
        tools = str(app.screen.query_one("#status-tools", Static).render())
        assert tools == "MCP tools: exec_command, write_stdin"
        text = str(app.screen.query_one("#status-text", Static).render())
        assert "Shell Sessions:\n  configured: on\n  effective: active" in text
        await pilot.press("5")
        await wait_for(pilot, lambda: app.current_mode == "events")
        log = app.screen.query_one("#events-log", RichLog)
        lines = "\n".join(strip.text for strip in log.lines)
        assert "session-opened session=pct-session-live kind=mcp" in lines
        assert "diagnostics" in lines
        await session.close()
        await wait_for(
            pilot,
            lambda: (
                "session-closed session=pct-session-live" in "\n".join(s.text for s in log.lines)
            ),
            "closed event",
        )
        await pilot.press("1")
        await wait_for(pilot, lambda: sessions.option_count == 1, "session gone")
