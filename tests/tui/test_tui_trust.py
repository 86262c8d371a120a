"""Pilot tests of issue 15: nothing stale, no lost drafts, a cursor that stays on its job,
the core tools on the Config screen, and every screen usable at 80×24."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from textual.widgets import DataTable, Label, OptionList, Static
from textual.widgets._footer import FooterKey

from pct_tui.app import PctApp
from pct_tui.drafts import MIGRATE_EMPTY_NOTICE
from pct_tui.screens.approval import ConfirmScreen
from pct_tui.screens.quit_guard import QuitScreen
from pct_tui.screens.rule_edit import RuleEditScreen
from pct_tui.widgets.banner import DiskBanner
from pct_tui.widgets.fit_text import FitText
from tests.tui.conftest import wait_for

RULES = {
    "execution": {
        "version": 1,
        "rules": [{"id": "all", "match": "*", "patch": True, "shell": True, "code": False}],
    }
}


def write_config(agent_dir: Path, document: object) -> Path:
    path = agent_dir / "extensions" / "pi-codex-toolkit.json"
    path.write_text(json.dumps(document, indent=2) + "\n")
    return path


def text(app: PctApp, selector: str) -> str:
    widget = app.screen.query_one(selector)
    if isinstance(widget, FitText):
        return widget.source
    assert isinstance(widget, Static | Label)
    return str(widget.render())


async def started(app: PctApp, pilot: object) -> None:
    await wait_for(pilot, lambda: app.console_state.ready, "runtime start")  # type: ignore[arg-type]


async def show(app: PctApp, pilot: object, key: str, mode: str) -> None:
    await pilot.press(key)  # type: ignore[attr-defined]
    await wait_for(pilot, lambda: app.current_mode == mode, mode)  # type: ignore[arg-type]


async def highlight(app: PctApp, pilot: object, key: str) -> None:
    menu = app.screen.query_one("#config-menu", OptionList)
    menu.highlighted = menu.get_option_index(key)
    await pilot.pause()  # type: ignore[attr-defined]


# -- item 1: the core tools on the Config screen ---------------------------------------------


async def test_core_tools_switch_on_from_config_and_rules_say_when_no_model(
    agent_dir: Path,
) -> None:
    path = write_config(agent_dir, {})
    app = PctApp(agent_dir=agent_dir, serve=False, watch=False)
    async with app.run_test(size=(160, 48)) as pilot:
        await started(app, pilot)
        await show(app, pilot, "2", "config")
        await highlight(app, pilot, "apply_patch")
        await pilot.press("enter")
        menu = app.screen.query_one("#config-menu", OptionList)
        assert str(menu.get_option("apply_patch").prompt) == "Apply Patch: on"
        await pilot.press("ctrl+s")
        await wait_for(pilot, lambda: "saved" in text(app, "#config-message"), "save")
        assert json.loads(path.read_text())["applyPatch"] == {"enabled": True}
        await show(app, pilot, "1", "status")
        assert text(app, "#status-tools") == "MCP tools: apply_patch"
        # a file with rules: the item points at the rules page, and no model is explained
        write_config(agent_dir, RULES)
        await pilot.press("ctrl+r")
        await wait_for(pilot, lambda: app.runtime.config.execution is not None, "reload")
        await wait_for(pilot, lambda: "No current model" in text(app, "#status-text"), "text")
        assert "no current model" in text(app, "#status-tools")
        assert "  reason: current-model-missing" in text(app, "#status-text")
        await show(app, pilot, "2", "config")
        await highlight(app, pilot, "shell_sessions")
        menu = app.screen.query_one("#config-menu", OptionList)
        prompt = str(menu.get_option("shell_sessions").prompt)
        assert prompt == "Shell Sessions: by execution rules (opens Rules)"
        assert "pct-tui --model" in str(app.screen.query_one("#config-effect", Static).render())
        await pilot.press("enter")
        await wait_for(pilot, lambda: app.current_mode == "rules", "rules")
        assert "No current model, so no execution rule can match" in text(app, "#rules-preview")
        assert "settings.json" in text(app, "#rules-preview")


# -- item 2: nothing stale -----------------------------------------------------------------


async def test_rules_notice_follows_the_draft(agent_dir: Path) -> None:
    app = PctApp(agent_dir=agent_dir, serve=False, watch=False)
    async with app.run_test(size=(160, 48)) as pilot:
        await started(app, pilot)
        await show(app, pilot, "3", "rules")
        await pilot.pause()
        assert text(app, "#rules-notice").startswith(MIGRATE_EMPTY_NOTICE)
        await pilot.press("a")
        await wait_for(pilot, lambda: isinstance(app.screen, RuleEditScreen), "rule page")
        await pilot.press("ctrl+s")
        await wait_for(pilot, lambda: not isinstance(app.screen, RuleEditScreen), "done")
        assert text(app, "#rules-notice") == (
            "Save will store these 1 rule(s) and remove the legacy Apply Patch / Shell / Code "
            "switches."
        )
        assert "● modified" in text(app, "#rules-title")
        await pilot.press("ctrl+s")
        await wait_for(pilot, lambda: "saved" in text(app, "#rules-message"), "save")
        assert text(app, "#rules-notice") == ""
        assert "modified" not in text(app, "#rules-title")


async def test_status_line_follows_saves_reloads_and_typos(agent_dir: Path) -> None:
    path = agent_dir / "extensions" / "pi-codex-toolkit.json"
    app = PctApp(agent_dir=agent_dir, serve=False, watch=False)
    async with app.run_test(size=(160, 48)) as pilot:
        await started(app, pilot)
        await pilot.pause()
        assert text(app, "#config-status") == (
            "Configuration loaded (no file yet: all-off defaults)."
        )
        await show(app, pilot, "2", "config")
        await pilot.press("enter", "ctrl+s")  # Web Search on, save: the file now exists
        await wait_for(pilot, lambda: path.exists(), "file")
        await show(app, pilot, "1", "status")
        assert text(app, "#config-status") == "Configuration loaded."
        path.write_text("{\n  broken\n}\n")
        await pilot.press("ctrl+r")
        await wait_for(pilot, lambda: app.runtime.config_error is not None, "broken reload")
        await pilot.pause()
        assert text(app, "#config-status") == (
            "Pi Codex Toolkit config error: invalid-json (line 2 column 3); using last known "
            "good settings."
        )
        assert app.screen.query_one("#config-status").has_class("error")
        write_config(agent_dir, {"applyPach": {"enabled": True}})
        await pilot.press("ctrl+r")
        await wait_for(pilot, lambda: app.runtime.config_error is None, "fixed reload")
        await pilot.pause()
        assert text(app, "#config-status") == (
            "Configuration loaded.\n"
            'Warning: unknown top-level key "applyPach" is ignored; did you mean applyPatch?'
        )


async def test_banner_goes_away_after_a_reload_from_elsewhere(agent_dir: Path) -> None:
    write_config(agent_dir, {"debug": False})
    app = PctApp(agent_dir=agent_dir, serve=False, watch=False)
    async with app.run_test(size=(160, 48)) as pilot:
        await started(app, pilot)
        banner = app.screen.query_one(DiskBanner)
        write_config(agent_dir, {"debug": True})
        assert await app.console_state.check_disk()  # what the watcher calls
        await pilot.pause()
        assert banner.has_class("-visible")
        # `pct reload` in another terminal: the control handler calls runtime.reload()
        await app.runtime.reload()
        await wait_for(pilot, lambda: not banner.has_class("-visible"), "banner hidden")
        assert not app.console_state.disk_changed
        await show(app, pilot, "2", "config")
        assert not app.screen.query_one(DiskBanner).has_class("-visible")


# -- item 4: no lost drafts -----------------------------------------------------------------


async def test_quit_asks_about_an_unsaved_draft(agent_dir: Path) -> None:
    path = write_config(agent_dir, {})
    app = PctApp(agent_dir=agent_dir, serve=False, watch=False)
    async with app.run_test(size=(160, 48)) as pilot:
        await started(app, pilot)
        await show(app, pilot, "2", "config")
        assert text(app, "#config-title") == "Configuration"
        await pilot.press("enter")  # Web Search on: a draft
        assert "● modified" in text(app, "#config-title")
        for key in ("q", "ctrl+c"):
            await pilot.press(key)
            await wait_for(pilot, lambda: isinstance(app.screen, QuitScreen), key)
            await pilot.press("escape")  # Cancel: still running, draft kept
            await wait_for(pilot, lambda: not isinstance(app.screen, QuitScreen), "cancel")
            assert app.is_running
            assert app.console_state.draft.dirty
        await pilot.press("ctrl+p")
        await pilot.pause()
        await pilot.press(*"Quit")
        await pilot.pause(0.3)
        await pilot.press("enter")
        await wait_for(pilot, lambda: isinstance(app.screen, QuitScreen), "palette quit")
        await pilot.press("s")  # Save and quit
        await wait_for(pilot, lambda: not app.is_running, "exit")
    assert json.loads(path.read_text())["webSearch"]["enabled"] is True


async def test_quit_discard_leaves_the_file_alone(agent_dir: Path) -> None:
    path = write_config(agent_dir, {})
    app = PctApp(agent_dir=agent_dir, serve=False, watch=False)
    async with app.run_test(size=(160, 48)) as pilot:
        await started(app, pilot)
        await show(app, pilot, "2", "config")
        await pilot.press("enter")
        await pilot.press("q")
        await wait_for(pilot, lambda: isinstance(app.screen, QuitScreen), "guard")
        await pilot.press("d")
        await wait_for(pilot, lambda: not app.is_running, "exit")
    assert json.loads(path.read_text()) == {}


async def test_looking_at_a_legacy_migration_is_not_a_draft(agent_dir: Path) -> None:
    write_config(agent_dir, {"applyPatch": {"enabled": True}})
    app = PctApp(agent_dir=agent_dir, serve=False, watch=False)
    async with app.run_test(size=(160, 48)) as pilot:
        await started(app, pilot)
        await show(app, pilot, "3", "rules")
        await show(app, pilot, "2", "config")
        menu = app.screen.query_one("#config-menu", OptionList)
        assert str(menu.get_option("apply_patch").prompt) == "Apply Patch: on"
        await pilot.press("q")
        await wait_for(pilot, lambda: not app.is_running, "exit without asking")


# -- item 5: the cursor stays on its job ----------------------------------------------------


async def test_sessions_cursor_stays_on_its_job_when_rows_are_inserted_above(
    agent_dir: Path, tmp_path: Path
) -> None:
    write_config(agent_dir, {"shellSessions": {"enabled": True}})
    app = PctApp(agent_dir=agent_dir, serve=False, watch=False, cwd=tmp_path)
    async with app.run_test(size=(160, 48)) as pilot:
        await started(app, pilot)
        first = await app.runtime.open_session("mcp", session_id="pct-session-a")
        second = await app.runtime.open_session("mcp", session_id="pct-session-b")
        chosen = await second.call("exec_command", {"cmd": "sleep 60", "yield_time_ms": 100})
        chosen_id = chosen.details["session_id"]
        await show(app, pilot, "4", "sessions")
        table = app.screen.query_one("#work-table", DataTable)
        await wait_for(pilot, lambda: table.row_count == 3, "rows")
        await pilot.press("down", "down")
        assert table.get_row_at(table.cursor_row)[2] == chosen_id
        # a job of the first session is inserted above the cursor
        other = await first.call("exec_command", {"cmd": "sleep 60", "yield_time_ms": 100})
        await wait_for(pilot, lambda: table.row_count == 4, "inserted row")
        assert table.get_row_at(1)[2] == other.details["session_id"]
        assert table.get_row_at(table.cursor_row)[2] == chosen_id
        await pilot.press("x")
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmScreen), "confirm")
        assert text(app, "#question-title") == f"Stop shell job {chosen_id}?"
        await pilot.press("n")


# -- item 6: usable at 80×24 ----------------------------------------------------------------


def visible(app: PctApp, selector: str) -> bool:
    """Drawn, not cut at the right, and starting above the footer (long text scrolls)."""
    widget = app.screen.query_one(selector)
    region = widget.region
    return (
        widget.display
        and region.width > 0
        and region.height > 0
        and region.right <= app.size.width
        and region.y < app.size.height - 1
    )


ESSENTIALS = {
    "status": ["#config-status", "#status-sessions", "#status-text"],
    "config": ["#config-menu", "#config-effect"],
    "rules": [
        "#rules-list",
        "#rule-add",
        "#rule-edit",
        "#rule-delete",
        "#rule-up",
        "#rule-down",
        "#rules-save",
        "#rules-preview",
    ],
    "sessions": ["#work-table", "#work-detail"],
    "events": ["#events-log"],
}


@pytest.mark.parametrize("size", [(80, 24), (160, 48)])
async def test_every_screen_keeps_its_controls_on_screen(
    agent_dir: Path, size: tuple[int, int]
) -> None:
    app = PctApp(agent_dir=agent_dir, serve=False, watch=False)
    async with app.run_test(size=size) as pilot:
        await started(app, pilot)
        for key, mode in zip("12345", ESSENTIALS, strict=True):
            await show(app, pilot, key, mode)
            await pilot.pause()
            for selector in ESSENTIALS[mode]:
                assert visible(app, selector), (mode, selector)
            keys = {k.key: k for k in app.screen.query(FooterKey)}
            for needed in ("question_mark", "q", "ctrl+r"):
                assert needed in keys, (mode, needed)
                assert keys[needed].region.right <= size[0], (mode, needed)
        await show(app, pilot, "3", "rules")
        assert app.screen.query_one("#rules-list").region.width >= 30


async def test_check_boxes_show_their_state_by_glyph(agent_dir: Path) -> None:
    write_config(agent_dir, RULES)
    app = PctApp(agent_dir=agent_dir, serve=False, watch=False)
    async with app.run_test(size=(80, 24)) as pilot:
        await started(app, pilot)
        await show(app, pilot, "3", "rules")
        await pilot.press("e")
        await wait_for(pilot, lambda: isinstance(app.screen, RuleEditScreen), "rule page")
        await pilot.pause()

        def box(selector: str) -> str:
            return str(app.screen.query_one(selector).render())

        assert box("#rule-patch").startswith("▐X▌")  # on
        assert box("#rule-code").startswith("▐ ▌")  # off: no X, whatever the colours
        await pilot.press("escape")
        await show(app, pilot, "2", "config")
        await highlight(app, pilot, "deferred")
        await pilot.press("enter")
        from pct_tui.screens.deferred import DeferredScreen

        await wait_for(pilot, lambda: isinstance(app.screen, DeferredScreen), "deferred")
        await pilot.pause()
        names = app.screen.query_one("#deferred-list")
        lines = [names.render_line(y).text for y in range(names.size.height)]
        chosen = set(app.console_state.draft.config.tool_discovery.deferred)
        glyphs = {line[4:].strip(): line[1] for line in lines if line[4:].strip()}
        assert {"X", " "} <= set(glyphs.values())
        for name, glyph in glyphs.items():
            assert glyph == ("X" if name in chosen else " "), name


async def test_quit_from_an_open_deferred_list_asks_and_save_keeps_its_ticks(
    agent_dir: Path,
) -> None:
    from textual.widgets import SelectionList

    from pct_tui.screens.deferred import DeferredScreen

    path = write_config(agent_dir, {})
    app = PctApp(agent_dir=agent_dir, serve=False, watch=False)
    async with app.run_test(size=(80, 24)) as pilot:
        await started(app, pilot)
        await show(app, pilot, "2", "config")
        await highlight(app, pilot, "deferred")
        await pilot.press("enter")
        await wait_for(pilot, lambda: isinstance(app.screen, DeferredScreen), "deferred")
        assert not app.console_state.draft.dirty
        app.screen.query_one("#deferred-list", SelectionList).select("apply_patch")
        await pilot.pause()
        assert "● modified" in text(app, "#question-title")
        await pilot.press("ctrl+q")
        await wait_for(pilot, lambda: isinstance(app.screen, QuitScreen), "guard")
        await pilot.press("s")
        await wait_for(pilot, lambda: not app.is_running, "exit")
    assert "apply_patch" in json.loads(path.read_text())["toolDiscovery"]["deferred"]
