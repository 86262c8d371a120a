"""Views follow the runtime: the status list and events log update from runtime events, the
output log keeps every byte of a batched stream, and the deferred editor validates."""

from __future__ import annotations

from pathlib import Path

from textual.app import App, ComposeResult
from textual.widgets import OptionList, RichLog, SelectionList, Static

from pct_tui.app import PctApp
from pct_tui.screens.deferred import DeferredScreen
from pct_tui.widgets.output_log import OutputLog, clean
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


class _LogApp(App[None]):
    def compose(self) -> ComposeResult:
        yield OutputLog(max_lines=None)


async def test_output_log_batches_without_dropping() -> None:
    app = _LogApp()
    async with app.run_test(size=(80, 20)) as pilot:
        log = app.query_one(OutputLog)
        pieces = [f"line {i}\n" for i in range(5000)]
        stream = "".join(pieces) + "partial"
        for start in range(0, len(stream), 777):  # chunks that split lines anywhere
            log.feed(stream[start : start + 777])
        assert log.written == 0  # nothing written before the next frame
        await wait_for(pilot, lambda: log.pending == 0, "drained")
        assert log.written == log.received == len(stream)
        assert log.lines[:2] == ["line 0", "line 1"]
        assert log.lines[4999] == "line 4999"
        assert log.lines[-1] == "partial"
        log.feed(" line\n\x1b[31mred\x1b[0m\r\n")
        await wait_for(pilot, lambda: log.pending == 0, "drained")
        assert log.lines[5000:] == ["partial line", "red", ""]
    assert clean("a\x07b\x1b[1;32mc\x1b[0m") == "abc"


async def test_deferred_editor_refuses_a_partial_computer_use_group(agent_dir: Path) -> None:
    app = PctApp(agent_dir=agent_dir, serve=False, watch=False)
    async with app.run_test(size=(130, 40)) as pilot:
        await wait_for(pilot, lambda: app.console_state.ready, "runtime start")
        await pilot.press("2")
        await wait_for(pilot, lambda: app.current_mode == "config")
        await pilot.press(*["down"] * 16, "enter")
        await wait_for(pilot, lambda: isinstance(app.screen, DeferredScreen), "editor")
        names = app.screen.query_one("#deferred-list", SelectionList)
        names.deselect("computer_use_click")
        await pilot.press("ctrl+s")
        await pilot.pause()
        assert str(app.screen.query_one("#deferred-error", Static).render()) == (
            "toolDiscovery.deferred must list all six Computer Use tools or none"
        )
        assert isinstance(app.screen, DeferredScreen)  # stays open, draft unchanged
        assert "computer_use_click" in app.console_state.draft.config.tool_discovery.deferred
        for name in list(names.selected):
            if name.startswith("computer_use_"):
                names.deselect(name)
        names.select("apply_patch")
        await pilot.click("#apply")
        await wait_for(pilot, lambda: not isinstance(app.screen, DeferredScreen), "applied")
        assert app.console_state.draft.config.tool_discovery.deferred == (
            "openai_generate_image",
            "apply_patch",
        )
        menu = app.screen.query_one("#config-menu", OptionList)
        assert str(menu.get_option_at_index(16).prompt) == "Deferred tools: 2 of 13"
