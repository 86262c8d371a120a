"""The executor picker offers the registry's valid candidates; the palette runs /pct commands;
the help screen lists the bindings."""

from __future__ import annotations

from pathlib import Path

from textual.widgets import Static

from pct_tui.app import PctApp
from pct_tui.screens.help import HelpScreen
from tests.tui.conftest import wait_for


async def test_palette_runs_pct_reload_and_status(agent_dir: Path) -> None:
    path = agent_dir / "extensions" / "pi-codex-toolkit.json"
    path.write_text('{"debug": false}\n')
    app = PctApp(agent_dir=agent_dir, serve=False, watch=False)
    async with app.run_test(size=(130, 40)) as pilot:
        await wait_for(pilot, lambda: app.console_state.ready, "runtime start")
        await pilot.press("2")
        await wait_for(pilot, lambda: app.current_mode == "config")
        path.write_text('{"debug": true}\n')
        await pilot.press("ctrl+p")
        await pilot.pause()
        await pilot.press(*"/pct reload")
        await pilot.pause(0.3)
        await pilot.press("enter")
        await wait_for(pilot, lambda: app.runtime.config.debug is True, "reload")
        assert app.facade.load_message == "Configuration loaded."
        await pilot.press("ctrl+p")
        await pilot.pause()
        await pilot.press(*"/pct status")
        await pilot.pause(0.3)
        await pilot.press("enter")
        await wait_for(pilot, lambda: app.current_mode == "status", "status")


async def test_help_lists_bindings(agent_dir: Path) -> None:
    app = PctApp(agent_dir=agent_dir, serve=False, watch=False)
    async with app.run_test(size=(130, 40)) as pilot:
        await wait_for(pilot, lambda: app.console_state.ready, "runtime start")
        await pilot.press("question_mark")
        await wait_for(pilot, lambda: isinstance(app.screen, HelpScreen))
        text = str(app.screen.query_one(Static).render())
        for binding in app.BINDINGS:
            binding_id = getattr(binding, "id", None)
            if binding_id and binding_id != "quit-ctrl":
                assert binding_id in text
        await pilot.press("escape")
        await wait_for(pilot, lambda: not isinstance(app.screen, HelpScreen))


def test_every_footer_key_is_in_help_with_the_same_label() -> None:
    """Footers, help and README agree: each shown binding's footer text is in the help."""
    from textual.binding import Binding

    from pct_tui.screens.approval import ConfirmScreen, WatchScreen
    from pct_tui.screens.config import ConfigScreen
    from pct_tui.screens.help import HELP_TEXT
    from pct_tui.screens.history.call import CallScreen
    from pct_tui.screens.history.screen import HistoryScreen
    from pct_tui.screens.rules import RulesScreen
    from pct_tui.screens.sessions import SessionsScreen

    app = PctApp(serve=False, watch=False)
    owners = (
        PctApp,
        ConfigScreen,
        RulesScreen,
        SessionsScreen,
        ConfirmScreen,
        HistoryScreen,
        CallScreen,
        WatchScreen,
    )
    readme = (Path(__file__).parents[3] / "README.md").read_text()
    for owner in owners:
        for binding in owner.BINDINGS:
            assert isinstance(binding, Binding)
            if not binding.show:
                continue
            label = f"{app.get_key_display(binding)} {binding.description}"
            assert label in HELP_TEXT, label
            assert f"`{label.split(' ')[0]}`" in readme, label


async def test_the_palette_offers_no_keys_panel_or_blind_screenshot(agent_dir: Path) -> None:
    app = PctApp(agent_dir=agent_dir, serve=False, watch=False, discover=False)
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_for(pilot, lambda: app.console_state.ready, "runtime start")
        titles = [command.title for command in app.get_system_commands(app.screen)]
        assert "Keys" not in titles
        assert "Screenshot" not in titles
        assert "Quit" in titles
        await pilot.press("question_mark")
        await wait_for(pilot, lambda: isinstance(app.screen, HelpScreen))
        text = str(app.screen.query_one(Static).render())
        assert "esc, q or ? closes this page" in text.splitlines()[0]
        await pilot.press("q")
        await wait_for(pilot, lambda: not isinstance(app.screen, HelpScreen), "closed")
