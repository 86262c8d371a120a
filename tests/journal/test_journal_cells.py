"""A Code Mode `exec`/`wait` row carries its cell's outcome, not the call's: a cell that
failed is `error` (with the nested call's code when one ended it), a stopped one `cancelled`."""

from __future__ import annotations

from pathlib import Path

import pytest

from pct_runtime.journal.recorder import cell_outcome
from pct_runtime.runtime import Runtime
from tests.journal.helpers import flushed_rows, make_root


@pytest.fixture
def root(tmp_path: Path) -> Path:
    return make_root(tmp_path)


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
        rows = [r for r in await flushed_rows(runtime) if r.path == "direct"]
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
