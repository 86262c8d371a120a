"""The executor picker offers the registry's valid candidates; the palette runs /pct commands;
the help screen lists the bindings."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from textual.widgets import OptionList

from pct_tui.app import PctApp
from pct_tui.screens.approval import ChoiceScreen
from tests.tui.conftest import wait_for


async def test_executor_picker_offers_registry_candidates(
    agent_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ("OPENAI_API_KEY", "OPENAI_CODEX_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    (agent_dir / "auth.json").write_text(
        json.dumps({"openai": {"type": "api_key", "key": "sk-test-not-real"}})
    )
    app = PctApp(agent_dir=agent_dir, serve=False, watch=False)
    async with app.run_test(size=(130, 40)) as pilot:
        await wait_for(pilot, lambda: app.console_state.ready, "runtime start")
        await pilot.press("2")
        await wait_for(pilot, lambda: app.current_mode == "config")
        await pilot.press(*["down"] * 4, "enter")  # Web Search executor
        await wait_for(pilot, lambda: isinstance(app.screen, ChoiceScreen), "picker")
        choices = app.screen.query_one("#choices", OptionList)
        options = [str(choices.get_option_at_index(i).prompt) for i in range(choices.option_count)]
        assert options[0] == "none"
        assert "openai/gpt-5.1" in options
        assert all(o == "none" or o.startswith("openai/") for o in options)
        choices.highlighted = options.index("openai/gpt-5.1")
        await pilot.press("enter")
        await wait_for(pilot, lambda: not isinstance(app.screen, ChoiceScreen))
        menu = app.screen.query_one("#config-menu", OptionList)
        assert str(menu.get_option_at_index(4).prompt) == "Web Search executor: openai/gpt-5.1"
        assert str(menu.get_option_at_index(5).prompt) == "Web Search executor effort: auto"
        await pilot.press("down", "enter")  # effort: the API-key route offers only auto
        await wait_for(pilot, lambda: isinstance(app.screen, ChoiceScreen), "effort picker")
        efforts = app.screen.query_one("#choices", OptionList)
        assert efforts.option_count == 1
        assert str(efforts.get_option_at_index(0).prompt) == "auto"
        await pilot.press("escape")
