"""What the model reads about a nested apply_patch's approval, through the real runtime and an
in-process MCP client: who said no (a console's person, a client that answered by itself, a
client or its user), and, while the question is pending, that a yielded cell waits for it."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import mcp_types as types
import pytest
from mcp import Client

from pct_runtime.host.ui import Question
from pct_runtime.runtime import Runtime
from pct_runtime.serve.mcp import elicitation
from pct_runtime.serve.mcp.server import PctMCPServer

PATCH = "*** Begin Patch\n*** Add File: notes/todo.md\n+first line\n*** End Patch"
CELL = f"await tools.apply_patch({PATCH!r})\ntext('patched')"
AGENT = types.Implementation(name="test-agent", version="7.1")


def text_of(result: types.CallToolResult) -> str:
    block = result.content[0]
    assert isinstance(block, types.TextContent)
    return block.text


@pytest.fixture
def root(tmp_path: Path) -> Path:
    config = tmp_path / "agent" / "extensions" / "pi-codex-toolkit.json"
    config.parent.mkdir(parents=True)
    config.write_text(
        json.dumps(
            {
                "applyPatch": {"enabled": True},
                "shellSessions": {"enabled": True},
                "codeMode": {"enabled": True, "approvalMode": "confirm"},
            }
        ),
        encoding="utf-8",
    )
    (tmp_path / "work").mkdir()
    return tmp_path


async def make(root: Path) -> tuple[Runtime, PctMCPServer]:
    runtime = Runtime(agent_dir=root / "agent", cwd=root / "work")
    await runtime.start()
    return runtime, PctMCPServer(runtime)


def answer(action: str, content: dict[str, Any] | None = None) -> Any:
    async def callback(context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        return types.ElicitResult(action=action, content=content)  # type: ignore[arg-type]

    return callback


async def _denied(root: Path, callback: Any) -> types.CallToolResult:
    runtime, server = await make(root)
    try:
        async with Client(
            server.server, mode="legacy", client_info=AGENT, elicitation_callback=callback
        ) as client:
            return await client.call_tool("exec", {"code": CELL})
    finally:
        await runtime.aclose()


async def test_a_client_declining_by_itself_is_not_called_the_user(
    root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`codex exec` answers `decline` in ~2 ms with nobody asked; the model must not read
    that the user declined, and must learn how to get the patch approved."""
    monkeypatch.setattr(elicitation, "AUTOMATIC_ANSWER_SECONDS", 60.0)  # load cannot flip it
    result = await _denied(root, answer("decline"))
    text = text_of(result)
    assert "(ToolError code: approval-denied)" in text, text
    assert (
        "The MCP client (test-agent) declined the approval request for the nested apply_patch "
        "by itself in "
    ) in text
    assert (
        " ms; no person was asked. Nothing was changed. Ask the user to open the pct console "
        "(pct-tui) to approve nested patches, or to set Code Mode approval to always, then retry."
    ) in text
    assert "user declined" not in text
    assert "patched" not in text
    assert not (root / "work" / "notes").exists()


@pytest.mark.parametrize(
    ("action", "content", "verb"),
    [
        ("decline", None, "declined"),
        ("cancel", None, "cancelled"),
        ("accept", {"approve": False}, "answered No to"),
    ],
)
async def test_a_late_answer_is_the_client_or_its_user(
    root: Path, monkeypatch: pytest.MonkeyPatch, action: str, content: Any, verb: str
) -> None:
    monkeypatch.setattr(elicitation, "AUTOMATIC_ANSWER_SECONDS", 0.0)  # as if a person took time
    text = text_of(await _denied(root, answer(action, content)))
    assert (
        f"The MCP client (test-agent) or its user {verb} the approval request for the nested "
        "apply_patch. Nothing was changed; do not retry it without asking the user."
    ) in text, text
    assert not (root / "work" / "notes").exists()


async def test_a_failed_request_says_nobody_answered(root: Path) -> None:
    async def broken(context: Any, params: Any) -> types.ElicitResult:
        raise RuntimeError("client crashed")

    text = text_of(await _denied(root, broken))
    assert "The MCP client (test-agent) did not answer the approval request" in text, text
    assert "(ToolError code: approval-denied)" in text
    assert not (root / "work" / "notes").exists()


class HeldConsole:
    """A console whose person answers only when the test says so."""

    def __init__(self) -> None:
        self.answer: asyncio.Future[bool] = asyncio.get_running_loop().create_future()
        self.asked = asyncio.Event()

    @property
    def available(self) -> bool:
        return True

    async def confirm(self, question: Question) -> bool:
        self.asked.set()
        return await self.answer

    async def select(self, question: Question) -> str | None:
        return None

    def notify(self, message: str, level: Any = "info") -> None:
        return None


async def test_a_console_decline_is_the_users(root: Path) -> None:
    runtime, server = await make(root)
    console = HeldConsole()
    console.answer.set_result(False)
    runtime.attach_ui(console)
    async with Client(server.server, mode="legacy", client_info=AGENT) as client:
        text = text_of(await client.call_tool("exec", {"code": CELL}))
    await runtime.aclose()
    assert (
        "The user declined the nested apply_patch in the pct console. Nothing was changed; "
        "do not retry it without asking the user.\n(ToolError code: approval-denied)"
    ) in text, text


async def test_a_yield_while_the_console_is_asked_says_why_the_cell_runs(root: Path) -> None:
    runtime, server = await make(root)
    console = HeldConsole()
    runtime.attach_ui(console)
    async with Client(server.server, mode="legacy", client_info=AGENT) as client:
        first = await client.call_tool("exec", {"code": CELL, "yield_time_ms": 300})
        assert console.asked.is_set()
        text = text_of(first)
        assert text.splitlines()[1].endswith(": running"), text
        assert (
            "nested apply_patch is waiting for approval (asked the pct console); nothing is "
            "changed until it is answered. Call wait with this cell_id again to get the result."
        ) in text
        assert first.meta is not None
        details = first.meta["pct/details"]
        assert details["awaiting_approval"] == [
            {
                "adapter": "apply_patch",
                "route": "console",
                "client": "test-agent",
                "automatic": False,
            }
        ]
        console.answer.set_result(True)
        done = await client.call_tool("wait", {"cell_id": details["cell_id"]})
    await runtime.aclose()
    assert "completed" in text_of(done).splitlines()[0], text_of(done)
    assert "waiting for approval" not in text_of(done)
    assert done.meta is not None
    assert "awaiting_approval" not in done.meta["pct/details"]
    assert (root / "work" / "notes" / "todo.md").read_text() == "first line\n"


async def test_a_yield_while_the_client_is_asked_names_the_client(root: Path) -> None:
    runtime, server = await make(root)
    release = asyncio.Event()

    async def held(context: Any, params: Any) -> types.ElicitResult:
        await release.wait()
        return types.ElicitResult(action="accept", content={"approve": True})

    async with Client(
        server.server, mode="legacy", client_info=AGENT, elicitation_callback=held
    ) as client:
        first = await client.call_tool("exec", {"code": CELL, "yield_time_ms": 300})
        text = text_of(first)
        assert (
            "nested apply_patch is waiting for approval (asked the MCP client test-agent)"
        ) in text, text
        assert first.meta is not None
        [pending] = first.meta["pct/details"]["awaiting_approval"]
        assert pending["route"] == "elicitation"
        release.set()
        done = await client.call_tool("wait", {"cell_id": first.meta["pct/details"]["cell_id"]})
    await runtime.aclose()
    assert "waiting for approval" not in text_of(done), text_of(done)
    assert (root / "work" / "notes" / "todo.md").read_text() == "first line\n"


async def test_a_cell_behind_another_cells_question_says_whom_it_waits_for(root: Path) -> None:
    runtime, server = await make(root)
    console = HeldConsole()
    runtime.attach_ui(console)
    second_patch = PATCH.replace("todo.md", "later.md")
    behind = f"await tools.apply_patch({second_patch!r})\ntext('patched too')"
    async with Client(server.server, mode="legacy", client_info=AGENT) as client:
        first = await client.call_tool("exec", {"code": CELL, "yield_time_ms": 300})
        assert console.asked.is_set()
        assert first.meta is not None
        ahead = first.meta["pct/details"]["cell_id"]
        second = await client.call_tool("exec", {"code": behind, "yield_time_ms": 300})
        text = text_of(second)
        assert (
            f"nested apply_patch waits for its turn behind {ahead}, whose nested "
            "apply_patch is waiting for approval (asked the pct console); it runs once that "
            "is done. Call wait with this cell_id again to get the result."
        ) in text, text
        assert second.meta is not None
        details = second.meta["pct/details"]
        assert text.index("waits for its turn") < text.index("(no output)")
        [queued] = details["queued"]
        assert queued["adapter"] == "apply_patch"
        assert queued["behind"].startswith(f"{ahead}, whose nested apply_patch is waiting")
        console.answer.set_result(True)  # both questions get Yes
        await client.call_tool("wait", {"cell_id": ahead})
        done = await client.call_tool("wait", {"cell_id": details["cell_id"]})
    await runtime.aclose()
    assert "waits for its turn" not in text_of(done), text_of(done)
    assert (root / "work" / "notes" / "later.md").read_text() == "first line\n"
