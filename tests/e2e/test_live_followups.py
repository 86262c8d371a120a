"""Live control against a real stdio `pct serve`: a live console's acts are journaled
by the runtime that does them, and a nested patch's approval carries each file's operation."""

from __future__ import annotations

import asyncio
import os
import time
from pathlib import Path

import pytest
from live_support import CODE_CONFIG, agent_client, connect, first, snapshot
from pct_procs import write_config

from pct_runtime.capabilities.apply_patch.executor import prepare_patch
from pct_runtime.capabilities.apply_patch.preview import file_diffs, question_diffs
from pct_runtime.journal import CallRecord, Journal, JournalQuery
from pct_runtime.serve.client.live_client import ApprovalInfo
from pct_tui.state.approvals import drawn_diffs

pytestmark = pytest.mark.e2e


async def _console_rows(agent: Path, count: int) -> list[CallRecord]:
    """The journal's console rows, oldest first, once `count` of them are written (the
    serve process's writer thread commits within a moment)."""
    deadline = time.monotonic() + 30
    while True:
        with Journal.open(agent) as journal:
            rows = [r for r in journal.query(JournalQuery(limit=100)) if r.transport == "console"]
        if len(rows) >= count or time.monotonic() > deadline:
            return list(reversed(rows))
        await asyncio.sleep(0.1)


async def test_a_live_consoles_stop_and_end_session_are_journaled(
    dirs: tuple[Path, Path],
) -> None:
    agent, work = dirs
    async with agent_client(agent, work) as mcp:
        await mcp.list_tools()
        live = await connect(agent)
        updates = live.updates()
        started = await mcp.call_tool("exec_command", {"cmd": "sleep 60", "yield_time_ms": 200})
        job_id = started.meta["pct/details"]["session_id"]  # type: ignore[index]
        snap = await first(updates, snapshot(lambda s: bool(s.work and s.sessions)))
        (session,) = snap.sessions
        stopped = await live.stop(job_id)
        assert stopped.ok, stopped.message
        assert (await live.end_session(session.id)).ok
        rows = await _console_rows(agent, 2)
        await live.aclose()
    console = f"live console {os.getpid()}"
    assert [
        (r.tool, r.session_id, r.outcome, r.summary, f"{r.client_name} {r.client_version}")
        for r in rows
    ] == [
        ("stop", session.id, "ok", f"shell job {job_id}", console),
        ("end_session", session.id, "ok", f"session {session.id}", console),
    ]
    assert rows[0].result_text == stopped.message


NESTED = (
    "*** Begin Patch\n"
    "*** Add File: docs/new.md\n+fresh\n"
    "*** Delete File: old.txt\n"
    "*** Update File: src/a.py\n*** Move to: src/b.py\n@@\n-x = 1\n+x = 2\n"
    "*** Update File: keep.txt\n@@\n-before\n+after\n"
    "*** End Patch"
)


async def test_an_approval_carries_each_files_operation(dirs: tuple[Path, Path]) -> None:
    agent, work = dirs
    write_config(agent, CODE_CONFIG)
    (work / "old.txt").write_text("gone\n")
    (work / "src").mkdir()
    (work / "src" / "a.py").write_text("x = 1\n")
    (work / "keep.txt").write_text("before\n")
    async with agent_client(agent, work) as mcp:
        await mcp.list_tools()
        live = await connect(agent)
        updates = live.updates()
        await first(updates, snapshot(lambda s: bool(s.sessions)))
        code = f"r = await tools.apply_patch({NESTED!r})\nr"
        call = asyncio.ensure_future(mcp.call_tool("exec", {"code": code}))
        asked: ApprovalInfo = await first(updates, lambda u: isinstance(u, ApprovalInfo))
        assert [(d.operation, d.path, d.source) for d in asked.diffs] == [
            ("add", "docs/new.md", None),
            ("delete", "old.txt", None),
            ("move", "src/b.py", "src/a.py"),
            ("update", "keep.txt", None),
        ]
        # The console draws exactly what an embedded approval of this patch would.
        prepared = await asyncio.to_thread(prepare_patch, NESTED, str(work))
        drawn = drawn_diffs(asked.diffs)
        assert drawn == drawn_diffs(question_diffs(prepared))
        assert [d.lines for d in drawn] == [d.lines for d in file_diffs(prepared)]
        assert "+x = 2" in asked.diffs[2].diff
        assert (await live.answer(asked.request_id, True)).ok
        result = await asyncio.wait_for(call, 30)
        assert not result.is_error
        assert (work / "src" / "b.py").read_text() == "x = 2\n"
        await live.aclose()
