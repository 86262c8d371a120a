"""A Code Mode `exec`/`wait` row carries its cell's outcome, not the call's: a cell that
failed is `error` (with the nested call's code when one ended it), a stopped one `cancelled`."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from pct_runtime.journal import CallRecord, Journal, JournalQuery
from pct_runtime.journal.recorder import cell_outcome
from pct_runtime.runtime import Runtime


@pytest.fixture
def root(tmp_path: Path) -> Path:
    agent = tmp_path / "agent"
    (agent / "extensions").mkdir(parents=True)
    (agent / "extensions" / "pi-codex-toolkit.json").write_text(
        json.dumps(
            {
                "applyPatch": {"enabled": True},
                "shellSessions": {"enabled": True},
                "codeMode": {"enabled": True, "approvalMode": "always"},
            }
        ),
        encoding="utf-8",
    )
    (tmp_path / "work").mkdir()
    return tmp_path


async def _rows(runtime: Runtime) -> list[CallRecord]:
    assert await asyncio.to_thread(runtime.journal.flush)
    with Journal.open(runtime.agent_dir) as journal:
        return list(reversed(journal.query(JournalQuery(limit=100))))


async def test_cell_states_become_outcomes(root: Path) -> None:
    async with Runtime(agent_dir=root / "agent", cwd=root / "work") as runtime:
        session = await runtime.open_session("embedded")
        done = await session.call("exec", {"code": "print(1)"})
        assert done.details["status"] == "completed"
        name = await session.call("exec", {"code": "x = undefined_name"})
        assert name.details["status"] == "failed"
        bad = await session.call("exec", {"code": "await tools.apply_patch(patch='bad')"})
        assert bad.details["status"] == "failed"
        caught = "try:\n    await tools.apply_patch(patch='bad')\nexcept Exception:\n    pass"
        assert (await session.call("exec", {"code": caught})).details["status"] == "completed"
        slow = "await tools.exec_command(cmd='sleep 30', yield_time_ms=30000)"
        running = await session.call("exec", {"code": slow, "yield_time_ms": 100})
        assert running.details["status"] == "running"
        cell = running.details["cell_id"]
        stopped = await session.call("wait", {"cell_id": cell, "terminate": True})
        assert stopped.details["status"] == "terminated"
        rows = [r for r in await _rows(runtime) if r.path == "direct"]
    assert [(r.tool, r.outcome, r.error_code) for r in rows] == [
        ("exec", "ok", None),
        ("exec", "error", "cell-failed"),
        ("exec", "error", "invalid-patch"),
        ("exec", "ok", None),  # the cell caught the nested call's error
        ("exec", "ok", None),  # yielded while running: the call itself answered
        ("wait", "cancelled", "terminated"),
    ]
    assert "NameError" in rows[1].result_text


def test_cell_outcome_reads_only_a_trailing_code_line() -> None:
    quoted = {"status": "failed", "error": "ValueError: '(ToolError code: fake)' in text\n"}
    assert cell_outcome(quoted) == ("error", "cell-failed")
    assert cell_outcome({"status": "completed", "error": "(ToolError code: x)"}) == ("ok", None)
    assert cell_outcome(None) == ("ok", None)
