"""Pilot tests of the console's flows, against the real embedded runtime.

Edit and save rules; a stale save keeps the draft; nested apply_patch approvals from a real
MCP client over the console's HTTP endpoint (Yes and No); stopping a shell job from the
sessions screen; the changed-on-disk banner.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import httpx2
import mcp_types as types
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from textual.widgets import Static

from pct_runtime.host.ui import Question
from pct_tui.app import PctApp
from pct_tui.screens.approval import ConfirmScreen
from tests.tui.conftest import started, wait_for, write_config

PATCH = "*** Begin Patch\n*** Add File: notes/todo.md\n+first line\n*** End Patch"


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
        first = asyncio.ensure_future(
            app.ui.confirm(Question("Computer Use access", "Allow Safari?"))
        )
        second = asyncio.ensure_future(
            app.ui.confirm(Question("Computer Use access", "Allow Notes?"))
        )
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmScreen))
        assert "Safari" in str(app.screen.query_one("#question-message", Static).render())
        assert len(app.screen_stack) == 2  # one modal, the other waits
        assert app.sub_title == "2 waiting"
        await pilot.press("y")
        assert await first is True
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmScreen))
        assert "Notes" in str(app.screen.query_one("#question-message", Static).render())
        await pilot.press("escape")
        assert await second is False
        assert app.sub_title == ""
        # a withdrawn request (the caller was cancelled) removes its modal
        third = asyncio.ensure_future(
            app.ui.confirm(Question("Computer Use access", "Allow Maps?"))
        )
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmScreen))
        third.cancel()
        await wait_for(pilot, lambda: not isinstance(app.screen, ConfirmScreen), "withdrawn")
