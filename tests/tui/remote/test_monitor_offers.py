"""A monitor offers only what it can do: no footer key that it would refuse, no Save or
rule buttons, and texts that speak of watching instead of attaching or saving."""

from __future__ import annotations

from pathlib import Path

from textual.widgets import OptionList

from pct_tui.app import PctApp
from tests.tui.conftest import show, started, text, wait_for


def shown_actions(app: PctApp) -> set[str]:
    return {
        binding.action
        for _, binding, enabled, _tip in app.screen.active_bindings.values()
        if binding.show and enabled
    }


async def test_monitor_footers_offer_no_refused_keys(agent_dir: Path) -> None:
    app = PctApp(serve=False, watch=False, monitor=True, discover=False)
    async with app.run_test(size=(80, 24)) as pilot:
        await started(app, pilot)
        assert text(app, "#attach-title") == "Monitor"  # it attaches no agent
        await show(app, pilot, "4", "sessions")
        assert not {"stop", "end_session"} & shown_actions(app)
        assert "view" in shown_actions(app)
        assert app.facade.runtimes()[0].header[:3] == ("this console", "pct-tui", "monitor")
        assert "No runtime of this agent dir has a session" in text(app, "#work-detail")
        await pilot.press("x")  # refused quietly: nothing to confirm
        await pilot.pause()
        assert app.current_mode == "sessions"
        assert len(app.screen_stack) == 1
        await show(app, pilot, "2", "config")
        assert "save" not in shown_actions(app)
        menu_keys = [item.key for item in app.console_state.draft.menu()]
        shown = app.screen.query_one("#config-menu", OptionList)
        ids = [shown.get_option_at_index(i).id for i in range(shown.option_count)]
        assert "save" in menu_keys
        assert "save" not in ids
        assert "cancel" not in ids
        assert "Monitor (read-only)" in text(app, "#config-draft")
        await pilot.press("enter")  # flipping a switch is refused, the draft stays clean
        await pilot.pause()
        assert not app.console_state.draft.dirty
        assert "not changed here" in text(app, "#config-message")
        await show(app, pilot, "3", "rules")
        assert not {"add_rule", "edit_rule", "delete_rule", "move_rule", "save"} & shown_actions(
            app
        )
        assert not app.screen.query_one("#rules-buttons").display
        assert "Monitor (read-only)" in text(app, "#rules-notice")
        assert "Save will" not in text(app, "#rules-notice")
        await show(app, pilot, "6", "history")
        assert "undo" not in shown_actions(app)
        await wait_for(pilot, lambda: "journaled" in text(app, "#history-detail"))
        assert "Undo" not in text(app, "#history-detail")


async def test_a_console_keeps_its_keys(agent_dir: Path) -> None:
    app = PctApp(serve=False, watch=False, discover=False)
    async with app.run_test(size=(80, 24)) as pilot:
        await started(app, pilot)
        await show(app, pilot, "4", "sessions")
        assert {"stop", "end_session"} <= shown_actions(app)
        await show(app, pilot, "3", "rules")
        assert "save" in shown_actions(app)
        assert app.screen.query_one("#rules-buttons").display
