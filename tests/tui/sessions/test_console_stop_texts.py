"""A job or cell a person stops from the embedded console (Sessions `x`, `LocalWork.stop`):
the model's next read says so, and tells it not to rerun the work unasked. A stop the
model asked for itself keeps the plain result."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from pct_runtime.runtime import Runtime, RuntimeSession
from pct_runtime.runtime.context import built_code, built_shell
from pct_tui.state.work import LocalWork

CONSOLE_LINE = (
    "stopped by the operator from the pct console (pct-tui), not by you; do not rerun this "
    "{what} without asking the user"
)


async def open_with(tmp_path: Path, config: dict[str, Any]) -> RuntimeSession:
    agent = tmp_path / "agent"
    (agent / "extensions").mkdir(parents=True)
    (agent / "extensions" / "pi-codex-toolkit.json").write_text(json.dumps(config), "utf-8")
    work = tmp_path / "work"
    work.mkdir()
    return await Runtime(agent_dir=agent, cwd=work).open_session("mcp")


async def test_a_shell_job_stopped_from_the_console_says_so(tmp_path: Path) -> None:
    session = await open_with(tmp_path, {"shellSessions": {"enabled": True}})
    try:
        started = await session.call("exec_command", {"cmd": "sleep 60", "yield_time_ms": 100})
        job_id = started.details["session_id"]
        shell = built_shell(session.context)
        assert shell is not None
        (job,) = shell.jobs()
        await LocalWork(session.id, "shell", job.id, job=job).stop()
        polled = await session.call("write_stdin", {"session_id": job_id})
        lines = polled.text.splitlines()
        assert lines[:2] == [f"session_id {job_id}: terminated", "exit_code: SIGTERM"]
        assert lines[2] == CONSOLE_LINE.format(what="command")
        assert polled.details["stopped_by"] == "console"
    finally:
        await session.runtime.aclose()


async def test_the_models_own_terminate_keeps_the_plain_result(tmp_path: Path) -> None:
    session = await open_with(tmp_path, {"shellSessions": {"enabled": True}})
    try:
        started = await session.call("exec_command", {"cmd": "sleep 60", "yield_time_ms": 100})
        job_id = started.details["session_id"]
        shell = built_shell(session.context)
        assert shell is not None
        (job,) = shell.jobs()
        stopping = asyncio.ensure_future(
            session.call("write_stdin", {"session_id": job_id, "terminate": True})
        )
        for _ in range(500):
            if job.stop_requested:
                break
            await asyncio.sleep(0.01)
        assert job.stop_requested
        job.request_stop(by="console")  # a console stop after the model's: the model's wins
        result = await stopping
        assert "operator" not in result.text
        assert "stopped_by" not in result.details
    finally:
        await session.runtime.aclose()


async def test_a_code_cell_stopped_from_the_console_says_so(tmp_path: Path) -> None:
    session = await open_with(tmp_path, {"codeMode": {"enabled": True}})
    try:
        started = await session.call(
            "exec", {"code": "text('up')\nwhile True:\n    pass", "yield_time_ms": 300}
        )
        assert started.details["status"] == "running", started.text
        cell_id = started.details["cell_id"]
        code = built_code(session.context)
        assert code is not None
        (view,) = code.cells()
        await LocalWork(session.id, "code", view.id, cell=view).stop()
        waited = await session.call("wait", {"cell_id": cell_id})
        lines = waited.text.splitlines()
        assert lines[:2] == [
            f"cell_id {cell_id}: terminated",
            CONSOLE_LINE.format(what="program"),
        ]
        assert "Cell terminated by request." in waited.text  # the spec's stop reason stays
        assert waited.details["stopped_by"] == "console"
    finally:
        await session.runtime.aclose()
