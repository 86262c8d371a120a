"""An asked command through the real MCP server and a client that can elicit: the client's
user sees the command with the matched part marked and answers Yes once, Yes for this
session or No; the journal records the decision and who made it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import mcp_types as types
import pytest
from mcp import Client

from pct_runtime.journal import Journal, JournalQuery
from pct_runtime.runtime import Runtime
from pct_runtime.serve.mcp.server import PctMCPServer

AGENT = types.Implementation(name="test-agent", version="1")


@pytest.fixture
def root(tmp_path: Path) -> Path:
    config = tmp_path / "agent" / "extensions" / "pi-codex-toolkit.json"
    config.parent.mkdir(parents=True)
    commands = {"rules": [{"prefix": "touch", "decision": "ask"}]}
    config.write_text(
        json.dumps({"shellSessions": {"enabled": True}, "pct": {"commands": commands}}),
        encoding="utf-8",
    )
    (tmp_path / "work").mkdir()
    return tmp_path


class Person:
    """An elicitation callback answering with scripted choices; keeps what it was shown."""

    def __init__(self, *choices: str | None) -> None:
        self.choices = list(choices)
        self.shown: list[str] = []

    async def __call__(self, context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        self.shown.append(params.message)
        choice = self.choices.pop(0)
        if choice is None:
            return types.ElicitResult(action="decline")
        return types.ElicitResult(action="accept", content={"choice": choice})


async def _run(root: Path, person: Person, *commands: str) -> list[types.CallToolResult]:
    runtime = Runtime(agent_dir=root / "agent", cwd=root / "work")
    await runtime.start()
    server = PctMCPServer(runtime)
    results = []
    try:
        async with Client(
            server.server, mode="legacy", client_info=AGENT, elicitation_callback=person
        ) as client:
            for command in commands:
                results.append(await client.call_tool("exec_command", {"cmd": command}))
        runtime.journal.flush()
    finally:
        await runtime.aclose()
    return results


def _policy_rows(root: Path) -> list[str]:
    with Journal.open(root / "agent") as journal:
        rows = journal.query(JournalQuery(limit=50))
    return [row.result_text for row in rows if row.tool == "command-policy"]


async def test_yes_once_then_for_the_session(root: Path) -> None:
    person = Person("Yes, once", "Yes, and for this session: touch")
    results = await _run(root, person, "touch a", "echo x && touch b", "touch c")
    assert [r.is_error for r in results] == [False, False, False]
    assert all((root / "work" / name).exists() for name in "abc")
    assert len(person.shown) == 2  # the session answer covers the third
    assert person.shown[1].startswith("Run this command? echo x && ⟦touch⟧ b")
    assert 'Command policy: rule "touch" (ask).' in person.shown[1]
    rows = _policy_rows(root)
    assert any("by: elicitation: yes once" in row for row in rows)
    assert any("by: elicitation: yes for this session" in row for row in rows)
    assert any("by: session approval" in row for row in rows)


async def test_no_runs_nothing(root: Path) -> None:
    results = await _run(root, Person("No"), "touch refused")
    assert results[0].is_error
    assert results[0].meta is not None
    assert results[0].meta["pct/error"]["code"] == "approval-denied"
    assert not (root / "work" / "refused").exists()
    assert any("by: elicitation: no" in row for row in _policy_rows(root))
