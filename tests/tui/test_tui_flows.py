"""Pilot tests of the console's flows, against the real embedded runtime.

Edit and save rules; a stale save keeps the draft; nested apply_patch approvals from a real
MCP client over the console's HTTP endpoint (Yes and No); stopping a shell job from the
sessions screen; the changed-on-disk banner.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import httpx2
import mcp_types as types
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from textual.widgets import Checkbox, DataTable, Input, Static

from pct_tui.app import PctApp
from pct_tui.screens.approval import ConfirmScreen
from pct_tui.screens.rule_edit import RuleEditScreen
from pct_tui.widgets.banner import DiskBanner
from pct_tui.widgets.fit_text import FitText
from tests.tui.conftest import wait_for

PATCH = "*** Begin Patch\n*** Add File: notes/todo.md\n+first line\n*** End Patch"


def write_config(agent_dir: Path, document: dict[str, object]) -> Path:
    path = agent_dir / "extensions" / "pi-codex-toolkit.json"
    path.write_text(json.dumps(document, indent=2) + "\n")
    return path


def shown(app: PctApp, selector: str) -> str:
    widget = app.screen.query_one(selector, Static)
    return widget.source if isinstance(widget, FitText) else str(widget.render())


async def started(app: PctApp, pilot: object) -> None:
    await wait_for(pilot, lambda: app.console_state.ready, "runtime start")  # type: ignore[arg-type]


async def test_edit_and_save_rules(agent_dir: Path) -> None:
    path = write_config(agent_dir, {"execution": {"version": 1, "rules": []}})
    app = PctApp(agent_dir=agent_dir, serve=False, watch=False)
    async with app.run_test(size=(130, 40)) as pilot:
        await started(app, pilot)
        await pilot.press("3")
        await wait_for(pilot, lambda: app.current_mode == "rules")
        # add two rules with keys; the first opens its page at once
        await pilot.press("a")
        await wait_for(pilot, lambda: isinstance(app.screen, RuleEditScreen))
        page = app.screen
        page.query_one("#rule-id", Input).value = "astra"
        page.query_one("#rule-match", Input).value = "gpt-6-astra"
        page.query_one("#rule-patch", Checkbox).value = True
        page.query_one("#rule-code", Checkbox).value = True
        await pilot.click("#rule-done")
        await wait_for(pilot, lambda: not isinstance(app.screen, RuleEditScreen))
        await pilot.click("#rule-add")  # the mouse path
        await wait_for(pilot, lambda: isinstance(app.screen, RuleEditScreen))
        # a duplicate id is refused with the spec's message and the page stays open
        app.screen.query_one("#rule-id", Input).value = "astra"
        await pilot.press("ctrl+s")
        await pilot.pause()
        assert shown(app, "#rule-error") == 'Rule id "astra" is already used by another rule.'
        assert isinstance(app.screen, RuleEditScreen)
        app.screen.query_one("#rule-id", Input).value = "everything"
        app.screen.query_one("#rule-shell", Checkbox).value = True
        await pilot.press("ctrl+s")
        await wait_for(pilot, lambda: not isinstance(app.screen, RuleEditScreen))
        rules = app.console_state.draft.rules
        assert [(r.id, r.match, r.patch, r.shell, r.code) for r in rules] == [
            ("astra", "gpt-6-astra", True, False, True),
            ("everything", "*", False, True, False),
        ]
        # move the catch-all up with a key, then down again with the button
        await pilot.press("ctrl+up")
        assert [r.id for r in app.console_state.draft.rules] == ["everything", "astra"]
        await pilot.click("#rule-down")
        assert [r.id for r in app.console_state.draft.rules] == ["astra", "everything"]
        # nothing is written until Save
        assert json.loads(path.read_text())["execution"]["rules"] == []
        await pilot.click("#rules-save")
        await wait_for(pilot, lambda: "saved" in shown(app, "#rules-message"))
        assert shown(app, "#rules-message") == "Pi Codex Toolkit configuration saved."
        saved = json.loads(path.read_text())["execution"]["rules"]
        assert saved == [
            {"id": "astra", "match": "gpt-6-astra", "patch": True, "shell": False, "code": True},
            {"id": "everything", "match": "*", "patch": False, "shell": True, "code": False},
        ]
        # applied at once: the runtime uses the saved rules
        assert app.runtime.config.execution.rules[0].id == "astra"
        # delete the second rule with a key; the draft is dirty again
        await pilot.press("down", "x")
        assert [r.id for r in app.console_state.draft.rules] == ["astra"]
        assert app.console_state.draft.dirty


async def test_legacy_file_previews_the_migration_and_writes_nothing(agent_dir: Path) -> None:
    path = write_config(agent_dir, {"applyPatch": {"enabled": True}, "codeMode": {"enabled": True}})
    before = path.read_text()
    app = PctApp(agent_dir=agent_dir, serve=False, watch=False)
    async with app.run_test(size=(130, 40)) as pilot:
        await started(app, pilot)
        await pilot.press("3")
        await wait_for(pilot, lambda: app.current_mode == "rules")
        await pilot.pause()
        assert shown(app, "#rules-notice") == (
            "Save will store one catch-all rule migrated (P+C) and remove the legacy enabled "
            "flags. Code-only also starts the nested Shell backend."
        )
        assert [r.id for r in app.console_state.draft.rules] == ["migrated"]
        assert path.read_text() == before
        await pilot.press("ctrl+s")
        await wait_for(pilot, lambda: "saved" in shown(app, "#rules-message"))
        document = json.loads(path.read_text())
        assert "enabled" not in document["applyPatch"]
        assert document["execution"]["rules"][0]["match"] == "*"


async def test_stale_save_keeps_the_draft(agent_dir: Path) -> None:
    path = write_config(agent_dir, {"debug": False})
    app = PctApp(agent_dir=agent_dir, serve=False, watch=False)
    async with app.run_test(size=(130, 40)) as pilot:
        await started(app, pilot)
        await pilot.press("2")
        await wait_for(pilot, lambda: app.current_mode == "config")
        # Web Search on, Image Generation on (Enter on each menu row)
        await pilot.press("enter")
        await pilot.press(*["down"] * 7, "enter")
        draft = app.console_state.draft
        assert draft.config.web_search.enabled
        effect = str(app.screen.query_one("#config-effect", Static).render())
        assert effect.startswith("With this draft a new session gets: ")  # Image Generation
        assert "unavailable" in effect  # no model: the draft would not make it active
        assert draft.config.image_generation.enabled
        # someone else writes the file meanwhile
        path.write_text('{"debug": true}\n')
        await pilot.press("ctrl+s")
        await wait_for(pilot, lambda: shown(app, "#config-message") != "")
        assert shown(app, "#config-message") == (
            "stale-revision: Could not save: the configuration file changed; reload and review "
            "the draft."
        )
        assert app.screen.query_one("#config-message").has_class("-error")
        assert path.read_text() == '{"debug": true}\n'  # untouched
        kept = app.console_state.draft
        assert kept is draft
        assert kept.dirty
        assert kept.config.web_search.enabled
        assert kept.config.image_generation.enabled
        assert str(app.screen.query_one("#config-menu").get_option_at_index(0).prompt) == (
            "Web Search: on"
        )


async def test_lock_held_save_keeps_the_draft(agent_dir: Path) -> None:
    path = write_config(agent_dir, {})
    lock = agent_dir / "extensions" / "pi-codex-toolkit.json.lock"
    lock.mkdir()  # held by a live foreign writer (pid 1 always runs)
    (lock / "owner").write_text('{"pid":1,"token":"foreign-token"}\n')
    app = PctApp(agent_dir=agent_dir, serve=False, watch=False)
    async with app.run_test(size=(130, 40)) as pilot:
        await started(app, pilot)
        await pilot.press("2")
        await wait_for(pilot, lambda: app.current_mode == "config")
        await pilot.press("enter", "ctrl+s")
        await wait_for(pilot, lambda: shown(app, "#config-message") != "", "save")
        assert shown(app, "#config-message").startswith("lock-held: Could not save: ")
        assert app.console_state.draft.dirty
        assert path.read_text() == "{}\n"


def _client(url: str, token: str) -> Client:
    http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=60)
    return Client(streamable_http_client(url, http_client=http), mode="legacy")


def _text(result: types.CallToolResult) -> str:
    return "\n".join(b.text for b in result.content if isinstance(b, types.TextContent))


async def test_nested_apply_patch_approval_yes_and_no_over_http(
    agent_dir: Path, tmp_path: Path
) -> None:
    write_config(
        agent_dir,
        {
            "applyPatch": {"enabled": True},
            "shellSessions": {"enabled": True},
            "codeMode": {"enabled": True, "approvalMode": "confirm"},
        },
    )
    work = tmp_path / "work"
    work.mkdir()
    app = PctApp(agent_dir=agent_dir, watch=False, cwd=work)
    async with app.run_test(size=(130, 40)) as pilot:
        await wait_for(pilot, lambda: app.attach_info is not None, "endpoint")
        await wait_for(pilot, lambda: app.serving.http.started, "uvicorn")  # type: ignore[union-attr]
        url = app.attach_info.url  # type: ignore[union-attr]
        token = (agent_dir / "pct" / "token").read_text().strip()
        assert url.startswith("http://127.0.0.1:")
        async with _client(url, token) as client:
            names = [t.name for t in (await client.list_tools()).tools]
            assert "exec" in names
            code = f"r = await tools.apply_patch({PATCH!r})\nr"
            call = asyncio.ensure_future(client.call_tool("exec", {"code": code}))
            await wait_for(
                pilot,
                lambda: (
                    isinstance(app.screen, ConfirmScreen) and bool(app.screen.query("#patch-diff"))
                ),
                "approval",
            )
            modal = app.screen
            assert str(modal.query_one("#question-title").render()) == "Code Mode: apply patch?"
            assert "notes/todo.md" in str(modal.query_one("#patch-files", Static).render())
            diff = modal.query_one("#patch-diff", Static).render()
            assert "+first line" in str(diff)
            assert "+++ b/notes/todo.md" in str(diff)  # a real diff, not the raw patch
            who = str(modal.query_one("#question-who", Static).render())
            assert who.startswith("Asked by session pct-session-")
            assert "client —" not in who  # the MCP client's name from its handshake
            assert not (work / "notes").exists()  # nothing before the answer
            await pilot.press("y")
            result = await call
            assert not result.is_error, _text(result)
            assert (work / "notes" / "todo.md").read_text() == "first line\n"

            (work / "app.py").write_text("import sys\n\ndef main():\n    print('hello')\n")
            second = (
                "*** Begin Patch\n*** Update File: app.py\n@@ def main():\n"
                "-    print('hello')\n+    print('bye')\n*** End Patch"
            )
            call = asyncio.ensure_future(
                client.call_tool("exec", {"code": f"await tools.apply_patch({second!r})"})
            )
            await wait_for(pilot, lambda: isinstance(app.screen, ConfirmScreen), "approval")
            await pilot.pause()
            diff = str(app.screen.query_one("#patch-diff", Static).render())
            # context from the file on disk, which the patch itself never mentions
            assert " import sys" in diff
            assert "-    print('hello')" in diff
            assert "+    print('bye')" in diff
            await pilot.press("n")
            result = await call
            assert "approval-denied" in _text(result)
            assert "print('hello')" in (work / "app.py").read_text()
            texts = [r.text for r in app.console_state.events if r.kind == "approval"]
            assert [t.split(":", 1)[0] for t in texts] == ["asked", "approved", "asked", "denied"]
            assert texts[-1].startswith("denied: Code Mode: apply patch? (session pct-session-")
            assert texts[-1].endswith("files=app.py")
        await app.shutdown()


async def test_approvals_are_queued_one_at_a_time(agent_dir: Path) -> None:
    app = PctApp(agent_dir=agent_dir, serve=False, watch=False)
    async with app.run_test(size=(130, 40)) as pilot:
        await started(app, pilot)
        first = asyncio.ensure_future(app.ui.confirm("Computer Use access", "Allow Safari?"))
        second = asyncio.ensure_future(app.ui.confirm("Computer Use access", "Allow Notes?"))
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmScreen))
        assert "Safari" in str(app.screen.query_one("#question-message", Static).render())
        assert len(app.screen_stack) == 2  # one modal, the other waits
        assert app.sub_title == "2 approval(s) waiting"
        await pilot.press("y")
        assert await first is True
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmScreen))
        assert "Notes" in str(app.screen.query_one("#question-message", Static).render())
        await pilot.press("escape")
        assert await second is False
        assert app.sub_title == ""
        # a withdrawn request (the caller was cancelled) removes its modal
        third = asyncio.ensure_future(app.ui.confirm("Computer Use access", "Allow Maps?"))
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmScreen))
        third.cancel()
        await wait_for(pilot, lambda: not isinstance(app.screen, ConfirmScreen), "withdrawn")


async def test_stop_a_shell_job_from_the_sessions_screen(agent_dir: Path, tmp_path: Path) -> None:
    write_config(agent_dir, {"shellSessions": {"enabled": True}})
    app = PctApp(agent_dir=agent_dir, serve=False, watch=False, cwd=tmp_path)
    async with app.run_test(size=(130, 40)) as pilot:
        await started(app, pilot)
        session = await app.runtime.open_session("mcp", session_id="pct-session-test")
        result = await session.call(
            "exec_command", {"cmd": "echo started; sleep 60", "yield_time_ms": 300}
        )
        job_id = result.details["session_id"]
        await pilot.press("4")
        await wait_for(pilot, lambda: app.current_mode == "sessions")
        table = app.screen.query_one("#work-table", DataTable)
        await wait_for(pilot, lambda: table.row_count == 2, "rows")
        assert table.get_row_at(1)[2] == job_id
        assert str(table.get_row_at(1)[3]) == "running"
        await pilot.press("down", "x")
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmScreen), "confirmation")
        assert str(app.screen.query_one("#question-title").render()) == (
            f"Stop shell job {job_id}?"
        )
        await pilot.press("y")
        await wait_for(pilot, lambda: str(table.get_row_at(1)[3]) == "terminated", "stopped")
        # the agent's next poll sees the terminal state
        polled = await session.call("write_stdin", {"session_id": job_id, "chars": ""})
        assert "terminated" in polled.text or "exited" in polled.text


async def test_output_viewer_follows_a_job(agent_dir: Path, tmp_path: Path) -> None:
    write_config(agent_dir, {"shellSessions": {"enabled": True}})
    app = PctApp(agent_dir=agent_dir, serve=False, watch=False, cwd=tmp_path)
    async with app.run_test(size=(130, 40)) as pilot:
        await started(app, pilot)
        session = await app.runtime.open_session("mcp", session_id="pct-session-view")
        await session.call(
            "exec_command",
            {"cmd": "echo first; read line; echo got $line; sleep 60", "yield_time_ms": 300},
        )
        await pilot.press("4")
        table = app.screen.query_one("#work-table", DataTable)
        await wait_for(pilot, lambda: table.row_count == 2, "rows")
        await pilot.press("down", "enter")
        from pct_tui.widgets.output_log import OutputLog

        await wait_for(pilot, lambda: bool(app.screen.query(OutputLog)), "viewer")
        log = app.screen.query_one(OutputLog)
        await wait_for(pilot, lambda: "first" in "\n".join(log.lines), "initial output")
        job_id = app.console_state.work[0].id
        await session.call("write_stdin", {"session_id": job_id, "chars": "hello\n"})
        await wait_for(pilot, lambda: "got hello" in "\n".join(log.lines), "live output")
        await pilot.press("escape")


async def test_changed_on_disk_banner_offers_reload(agent_dir: Path) -> None:
    path = write_config(agent_dir, {"debug": False})
    app = PctApp(agent_dir=agent_dir, serve=False)
    async with app.run_test(size=(130, 40)) as pilot:
        await started(app, pilot)
        await wait_for(
            pilot,
            lambda: any(w.name == "config-watcher" for w in app.workers),
            "watcher",
        )
        await pilot.pause(0.3)
        banner = app.screen.query_one(DiskBanner)
        assert not banner.has_class("-visible")
        # an atomic replace, as an editor or another Toolkit process does it (repeated in
        # case the watch was not yet established when the first one happened)
        temp = path.with_name(".pi-codex-toolkit.json.tmp")
        for attempt in range(10):
            temp.write_text('{"debug": true}\n' + " " * attempt)
            temp.replace(path)
            for _ in range(100):
                if banner.has_class("-visible"):
                    break
                await pilot.pause(0.02)
            if banner.has_class("-visible"):
                break
        assert banner.has_class("-visible")
        assert app.runtime.config.debug is False  # never reloads by itself
        await pilot.click("#banner-reload")
        await wait_for(pilot, lambda: app.runtime.config.debug is True, "reload")
        assert not banner.has_class("-visible")
        # our own save is not news
        await pilot.press("2")
        await wait_for(pilot, lambda: app.current_mode == "config")
        await pilot.press("enter", "ctrl+s")
        await wait_for(pilot, lambda: "saved" in shown(app, "#config-message"), "save")
        await pilot.pause(0.6)
        assert not app.screen.query_one(DiskBanner).has_class("-visible")


async def test_stop_a_code_cell_and_end_a_session(agent_dir: Path, tmp_path: Path) -> None:
    write_config(agent_dir, {"shellSessions": {"enabled": True}, "codeMode": {"enabled": True}})
    app = PctApp(agent_dir=agent_dir, serve=False, watch=False, cwd=tmp_path)
    async with app.run_test(size=(130, 40)) as pilot:
        await started(app, pilot)
        session = await app.runtime.open_session("mcp", session_id="pct-session-cells")
        result = await session.call(
            "exec", {"code": "text('spinning')\nwhile True:\n    pass", "yield_time_ms": 300}
        )
        assert result.details["status"] == "running", result.text
        await pilot.press("4")
        table = app.screen.query_one("#work-table", DataTable)
        await wait_for(pilot, lambda: table.row_count == 2, "rows")
        assert table.get_row_at(1)[1] == "code"
        await pilot.press("down", "x")
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmScreen), "confirmation")
        assert str(app.screen.query_one("#question-title").render()).startswith("Stop code cell")
        await pilot.press("y")
        await wait_for(pilot, lambda: str(table.get_row_at(1)[3]) == "terminated", "stopped")
        # end the whole session (confirmed): it leaves the runtime
        await pilot.press("up", "T")
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmScreen), "confirmation")
        await pilot.press("n")  # No keeps it
        await pilot.pause()
        assert app.runtime.session("pct-session-cells") is not None
        await pilot.press("T")
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmScreen), "confirmation")
        await pilot.press("y")
        await wait_for(pilot, lambda: app.runtime.session("pct-session-cells") is None, "ended")
        assert session.closed


async def test_cells_of_a_rebound_code_manager_still_appear(
    agent_dir: Path, tmp_path: Path
) -> None:
    """Disabling Code Mode stops its cells and a re-enable binds a fresh manager; the
    sessions view must follow the new manager, not only the one it saw at session open."""
    config = {"shellSessions": {"enabled": True}, "codeMode": {"enabled": True}}
    write_config(agent_dir, config)
    app = PctApp(agent_dir=agent_dir, serve=False, watch=False, cwd=tmp_path)
    async with app.run_test(size=(130, 40)) as pilot:
        await started(app, pilot)
        session = await app.runtime.open_session("mcp", session_id="pct-session-rebind")
        spin = {"code": "while True:\n    pass", "yield_time_ms": 100}
        first = await session.call("exec", spin)
        state = app.console_state
        await wait_for(pilot, lambda: any(r.kind == "code" for r in state.work), "first cell")
        write_config(agent_dir, {**config, "codeMode": {"enabled": False}})
        await app.runtime.reload()
        write_config(agent_dir, config)
        await app.runtime.reload()
        second = await session.call("exec", spin)
        assert second.details["cell_id"] != first.details["cell_id"]
        await wait_for(
            pilot,
            lambda: any(r.id == second.details["cell_id"] for r in state.work),
            "cell of the rebound manager",
        )
        await session.close()
