"""The console's command policy editor (Config → Command policy), through Pilot against the
real embedded runtime: add, edit, reorder, delete, the default, the preview and Save."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from textual.widgets import Input, OptionList, Select, Static

from pct_tui.app import PctApp
from pct_tui.screens.commands import CommandRuleScreen, CommandsScreen
from tests.tui.conftest import started, wait_for, write_config

RULES = [
    {"prefix": "git push", "decision": "deny"},
    {"prefix": "curl", "decision": "ask"},
]


def shown(app: PctApp, selector: str) -> str:
    return str(app.screen.query_one(selector, Static).render())


def listed(app: PctApp) -> list[str]:
    rules = app.screen.query_one("#commands-list", OptionList)
    return [str(rules.get_option_at_index(i).prompt) for i in range(rules.option_count)]


async def open_commands(app: PctApp, pilot: object) -> None:
    await pilot.press("2")  # type: ignore[attr-defined]
    await wait_for(pilot, lambda: app.current_mode == "config")  # type: ignore[arg-type]
    menu = app.screen.query_one("#config-menu", OptionList)
    ids = [menu.get_option_at_index(i).id for i in range(menu.option_count)]
    menu.highlighted = ids.index("commands")
    assert str(menu.get_option_at_index(ids.index("commands")).prompt) == (
        "Command policy: 2 rules, default allow"
    )
    await pilot.press("enter")  # type: ignore[attr-defined]
    await wait_for(pilot, lambda: isinstance(app.screen, CommandsScreen))  # type: ignore[arg-type]


async def test_rules_are_listed_and_the_preview_explains(agent_dir: Path) -> None:
    write_config(agent_dir, {"pct": {"commands": {"default": "allow", "rules": RULES}}})
    app = PctApp(agent_dir=agent_dir, serve=False, watch=False)
    async with app.run_test(size=(120, 40)) as pilot:
        await started(app, pilot)
        await open_commands(app, pilot)
        assert listed(app) == ["1. deny   git push", "2. ask    curl"]
        app.screen.query_one("#commands-try", Input).value = "cd x && bash -c 'git push'"
        await pilot.pause()
        assert shown(app, "#commands-verdict") == (
            "cd x && bash -c ⟦'git push'⟧\n→ deny: `git push` matches rule 'git push'"
        )
        app.screen.query_one("#commands-try", Input).value = "echo git push"
        await pilot.pause()
        assert "allow: `echo git push` matches no rule" in shown(app, "#commands-verdict")


async def test_add_edit_reorder_delete_and_save(agent_dir: Path) -> None:
    path = write_config(agent_dir, {"pct": {"commands": {"default": "allow", "rules": RULES}}})
    app = PctApp(agent_dir=agent_dir, serve=False, watch=False)
    async with app.run_test(size=(120, 40)) as pilot:
        await started(app, pilot)
        await open_commands(app, pilot)
        await pilot.press("a")
        await wait_for(pilot, lambda: isinstance(app.screen, CommandRuleScreen))
        prefix = app.screen.query_one("#command-rule-prefix", Input)
        prefix.value = "  "
        await pilot.press("ctrl+s")
        assert shown(app, "#command-rule-error") == (
            "pct.commands.rules[2].prefix must be a non-empty command prefix"
        )
        prefix.value = "npm publish"
        app.screen.query_one("#command-rule-decision", Select).value = "deny"
        await pilot.press("ctrl+s")
        await wait_for(pilot, lambda: isinstance(app.screen, CommandsScreen))
        await pilot.pause()
        assert listed(app)[2] == "3. deny   npm publish"
        assert "● modified" in str(app.screen.query_one("#commands-title").render())
        await pilot.press("K")  # move it up
        assert listed(app)[1] == "2. deny   npm publish"
        app.screen.query_one("#commands-list", OptionList).highlighted = 2
        await pilot.press("x")  # delete curl
        await pilot.press("d")  # allow -> ask
        assert listed(app) == ["1. deny   git push", "2. deny   npm publish"]
        await pilot.press("ctrl+s")
        await wait_for(pilot, lambda: shown(app, "#commands-message") != "")
        saved = json.loads(path.read_text())["pct"]["commands"]
        assert saved == {
            "default": "ask",
            "rules": [
                {"prefix": "git push", "decision": "deny"},
                {"prefix": "npm publish", "decision": "deny"},
            ],
        }
        # The runtime judges by the saved policy at once.
        assert app.runtime.commands.default == "ask"
        await pilot.press("escape")
        await wait_for(pilot, lambda: app.current_mode == "config")


async def test_an_asked_command_is_answered_in_the_console(agent_dir: Path, tmp_path: Path) -> None:
    from pct_tui.screens.approval import ChoiceScreen

    write_config(
        agent_dir,
        {
            "shellSessions": {"enabled": True},
            "pct": {"commands": {"rules": [{"prefix": "touch", "decision": "ask"}]}},
        },
    )
    work = tmp_path / "work"
    work.mkdir()
    app = PctApp(agent_dir=agent_dir, serve=False, watch=False, cwd=work)
    async with app.run_test(size=(120, 40)) as pilot:
        await started(app, pilot)
        session = await app.runtime.open_session("mcp")
        call = asyncio.ensure_future(
            session.call("exec_command", {"cmd": "echo [b]hi[/b] && touch asked"})
        )
        await wait_for(pilot, lambda: isinstance(app.screen, ChoiceScreen), "question")
        title = str(app.screen.query_one("#question-title").render())
        assert title == "Run this command? echo [b]hi[/b] && ⟦touch⟧ asked"  # never markup
        note = str(app.screen.query_one("#choice-note").render())
        assert note.startswith('Command policy: rule "touch" (ask).')
        assert not (work / "asked").exists()
        await pilot.press("enter")  # Yes, once
        result = await call
        assert result.details["status"] in ("completed", "running")
        await wait_for(pilot, lambda: (work / "asked").exists(), "the command")
