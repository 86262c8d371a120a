"""A real `pct serve` (stdio and HTTP) journals its calls; a SIGKILL loses no committed row."""

from __future__ import annotations

import asyncio
import os
import signal
import sqlite3
import time
from pathlib import Path

import httpx2
import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp.client.streamable_http import streamable_http_client

from pct_runtime.journal import Journal, JournalQuery, undo_patch
from pct_runtime.journal.store import db_path
from tests.e2e.pct_procs import PCT, child_env, http_server, write_config

pytestmark = pytest.mark.e2e

PATCH = "*** Begin Patch\n*** Add File: {name}\n+{text}\n*** End Patch"


@pytest.fixture
def dirs(tmp_path: Path) -> tuple[Path, Path]:
    agent, work = tmp_path / "agent", tmp_path / "work"
    agent.mkdir()
    work.mkdir()
    write_config(agent, {"applyPatch": {"enabled": True}, "shellSessions": {"enabled": True}})
    return agent, work


def _rows(agent: Path) -> list[tuple[str, str, str]]:
    with Journal.open(agent) as journal:
        rows = journal.query(JournalQuery(limit=100))
    return [(r.tool, r.transport, r.outcome) for r in reversed(rows)]


def _wait_rows(agent: Path, count: int, timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if db_path(agent).exists() and len(_rows(agent)) >= count:
            return
        time.sleep(0.05)
    raise AssertionError(f"expected {count} journal rows, have {_rows(agent)}")


async def test_stdio_server_journals_with_client_info(dirs: tuple[Path, Path]) -> None:
    agent, work = dirs
    params = StdioServerParameters(command=PCT, args=["serve"], env=child_env(agent), cwd=work)
    async with Client(params, mode="legacy") as client:
        await client.call_tool("apply_patch", {"patch": PATCH.format(name="s.txt", text="x")})
        await client.call_tool("exec_command", {"cmd": "echo stdio"})
    _wait_rows(agent, 2)
    assert _rows(agent) == [("apply_patch", "stdio", "ok"), ("exec_command", "stdio", "ok")]
    with Journal.open(agent) as journal:
        newest = journal.query()[0]
        assert newest.client_name == "mcp"
        assert newest.summary == "echo stdio"
        outcome = undo_patch(journal)
    assert outcome.ok, outcome.message
    assert not (work / "s.txt").exists()


async def test_http_server_rows_survive_sigkill(dirs: tuple[Path, Path]) -> None:
    agent, work = dirs
    token = "journal-e2e-token-0123456789"
    with http_server(agent, work, PCT_TOKEN=token) as (url, proc):
        http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=30)
        async with Client(streamable_http_client(url, http_client=http), mode="legacy") as client:
            for n in range(5):
                patch = PATCH.format(name=f"f{n}.txt", text=n)
                assert not (await client.call_tool("apply_patch", {"patch": patch})).is_error
            await client.call_tool("exec_command", {"cmd": f"echo {token}"})
            await asyncio.to_thread(_wait_rows, agent, 6)
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(10)
    db = sqlite3.connect(db_path(agent))
    try:
        assert db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    finally:
        db.close()
    rows = _rows(agent)
    assert rows == [("apply_patch", "http", "ok")] * 5 + [("exec_command", "http", "ok")]
    with Journal.open(agent) as journal:
        records = journal.query()
        assert token not in records[0].summary  # the server's own token is redacted
        assert token not in records[0].result_text
        assert all(r.undoable for r in records[1:])
        # Every pre-image committed before the kill is there: undo the oldest patch.
        assert undo_patch(journal, records[-1].call_id).ok
    assert not (work / "f0.txt").exists()
