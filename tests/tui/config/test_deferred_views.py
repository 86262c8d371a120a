"""Views follow the runtime: the status list and events log update from runtime events, the
output log keeps every byte of a batched stream, and the deferred editor validates."""

from __future__ import annotations

from pathlib import Path

from textual.widgets import OptionList, SelectionList, Static

from pct_tui.app import PctApp
from pct_tui.screens.deferred import DeferredScreen
from tests.tui.conftest import wait_for


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
