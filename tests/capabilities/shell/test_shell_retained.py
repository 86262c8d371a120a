"""After an unconfirmed close the kept jobs stay reachable; `reopen` needs a confirmed close."""

from __future__ import annotations

from pathlib import Path

import pytest

from pct_runtime.capabilities.base import ToolError
from pct_runtime.capabilities.shell import ShellManager


async def test_kept_jobs_answer_polls_while_new_starts_are_refused(
    manager: ShellManager, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import pct_runtime.capabilities.shell.job as job_module

    first = await manager.start({"cmd": "exec sleep 30", "yield_time_ms": 0}, cwd=tmp_path)
    sid = first.details["session_id"]
    with monkeypatch.context() as stuck:
        stuck.setattr(job_module, "group_alive", lambda pgid: True)  # never confirmed gone
        with pytest.raises(ToolError) as info:
            await manager.close()
        assert info.value.code == "cleanup-incomplete"
        assert manager.retaining
        assert manager.closed
        assert manager.reopen() is False  # still closed: the stop is unconfirmed
        with pytest.raises(ToolError) as refused:
            await manager.start({"cmd": "true"}, cwd=tmp_path)
        assert refused.value.code == "manager-closed"
        manager.check_session(sid)  # the kept job is still this manager's
        polled = await manager.write({"session_id": sid, "yield_time_ms": 250})
        assert polled.details["session_id"] == sid
        assert polled.details["status"] == "terminated"
        assert polled.details["unknown_outcome"] is True
        with pytest.raises(ToolError) as other:
            await manager.write({"session_id": "pct-shell-000000000000"})
        assert other.value.code == "manager-closed"
    await manager.close()  # the retry confirms the stop
    assert not manager.retaining
    assert manager.session_ids() == []
    assert manager.reopen() is True
    again = await manager.start({"cmd": "echo back"}, cwd=tmp_path)
    assert again.details["stdout"] == "back\n"
