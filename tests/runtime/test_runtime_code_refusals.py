"""A nested call the session does not admit names the cause the model can act on: in
legacy Code Mode with Shell Sessions off, `tools.exec_command(...)` says Shell Sessions are
not enabled instead of blaming an undeclared `uses` (QA F8)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pct_runtime.runtime import Runtime, RuntimeSession


async def open_with(tmp_path: Path, config: dict[str, Any]) -> RuntimeSession:
    agent = tmp_path / "agent"
    (agent / "extensions").mkdir(parents=True)
    (agent / "extensions" / "pi-codex-toolkit.json").write_text(json.dumps(config), "utf-8")
    work = tmp_path / "work"
    work.mkdir()
    return await Runtime(agent_dir=agent, cwd=work).open_session("mcp")


CELL = (
    "try:\n    await tools.exec_command(cmd='echo hi')\n"
    "except ToolError as e:\n    text(e.code + '|' + e.message)\n"
)


async def test_legacy_code_mode_without_shell_sessions_names_the_cause(tmp_path: Path) -> None:
    session = await open_with(tmp_path, {"codeMode": {"enabled": True}})
    try:
        r = await session.call("exec", {"code": CELL})
        assert r.details["status"] == "completed", r.text
        assert r.details["output"] == (
            "adapter-disabled|tools.exec_command is not admitted in this session (Shell "
            "Sessions are not enabled); nothing ran."
        )
        declared = await session.call("exec", {"code": CELL, "uses": ["exec_command"]})
        assert declared.details["output"] == r.details["output"]
    finally:
        await session.runtime.aclose()


async def test_with_shell_sessions_on_the_nested_shell_runs(tmp_path: Path) -> None:
    session = await open_with(
        tmp_path, {"codeMode": {"enabled": True}, "shellSessions": {"enabled": True}}
    )
    try:
        r = await session.call(
            "exec", {"code": "r = await tools.exec_command(cmd='echo hi')\nr['stdout']"}
        )
        assert r.details["result"] == "hi\n", r.text
    finally:
        await session.runtime.aclose()
