"""Canaries through the real `pct serve`: every token format written through exec_command,
apply_patch (file names and results) and write_stdin (a password a program echoes) is in
no byte of the journal — database, WAL, shared memory, blobs or spool."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters

from pct_runtime.journal import Journal, JournalQuery
from tests.e2e.pct_procs import PCT, child_env, write_config
from tests.journal.test_journal_redaction import TOKENS, WORDS

pytestmark = pytest.mark.e2e

#: Not a known shape: only its being typed into the shell session hides it.
PASSWORD = "CANARYhunter2-typed"


def _journal_bytes(agent: Path) -> bytes:
    state = agent / "pct"
    files = [p for p in state.rglob("*") if p.is_file() and not p.is_symlink()]
    return b"".join(p.read_bytes() for p in files if p.name != "journal-spool.key")


def _wait_rows(agent: Path, count: int) -> list[str]:
    deadline = time.monotonic() + 30
    tools: list[str] = []
    while time.monotonic() < deadline:
        if (agent / "pct" / "journal.sqlite3").exists():
            with Journal.open(agent) as journal:
                tools = [r.tool for r in journal.query(JournalQuery(limit=100))]
            if len(tools) >= count:
                return tools
        time.sleep(0.05)
    raise AssertionError(f"expected {count} rows, have {tools}")


async def test_no_canary_reaches_any_journal_byte(tmp_path: Path) -> None:
    agent, work = tmp_path / "agent", tmp_path / "work"
    agent.mkdir()
    work.mkdir()
    write_config(agent, {"applyPatch": {"enabled": True}, "shellSessions": {"enabled": True}})
    words = [TOKENS[name] for name in WORDS]
    params = StdioServerParameters(command=PCT, args=["serve"], env=child_env(agent), cwd=work)
    calls = 0
    async with Client(params, mode="legacy") as client:
        for name, token in TOKENS.items():
            quoted = token.replace("'", "'\\''")
            done = await client.call_tool("exec_command", {"cmd": f"printf '%s\\n' '{quoted}'"})
            assert not done.is_error, name
            calls += 1
        for n, token in enumerate(words[:8]):
            files = [f"secrets/{token}.txt", f"keys_{words[-1 - n]}.json"]
            sections = "".join(f"*** Add File: {f}\n+plain {n}\n" for f in files)
            patch = f"*** Begin Patch\n{sections}*** End Patch"
            done = await client.call_tool("apply_patch", {"patch": patch})
            assert not done.is_error, done
            calls += 1
        started = await client.call_tool(
            "exec_command", {"cmd": 'read -r pw; echo "got:$pw"', "yield_time_ms": 300}
        )
        shell = (started.meta or {})["pct/details"]["session_id"]
        typed = await client.call_tool(
            "write_stdin", {"session_id": shell, "chars": PASSWORD + "\n", "yield_time_ms": 3000}
        )
        assert any("got:" + PASSWORD in getattr(c, "text", "") for c in typed.content)
        calls += 2
    tools = _wait_rows(agent, calls)
    assert tools.count("apply_patch") == 8
    raw = _journal_bytes(agent)
    assert b"CANARY" not in raw
    for token in TOKENS.values():
        assert token.encode() not in raw
    with Journal.open(agent) as journal:
        rows = journal.query(JournalQuery(limit=100))
    patches = [r for r in rows if r.tool == "apply_patch"]
    assert all("secrets/<redacted>.txt" in r.summary for r in patches)
    assert not any(r.undoable for r in patches)  # their real names were not kept
    (stdin_row,) = [r for r in rows if r.tool == "write_stdin"]
    assert "got:<redacted>" in stdin_row.result_text
