"""The MCP Inspector's command-line mode against `pct serve` (stdio): tools/list, tools/call.

The Inspector's CLI (npm `@modelcontextprotocol/inspector`) is an independent client
implementation; skipped with a reason where it is not installed. It prints the result as the
wire carries it: the text as `content`, the details in `_meta["pct/details"]`, and no
`structuredContent` unless `pct serve --structured-content` asked for it.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
from pct_procs import PCT, child_env, write_config

from tests.node_tools import node_bin

pytestmark = pytest.mark.e2e

_found = node_bin("mcp-inspector")
INSPECTOR = Path(_found) if _found else None


@pytest.fixture
def inspector() -> Path:
    if INSPECTOR is None:
        pytest.skip("MCP Inspector CLI not installed (npm @modelcontextprotocol/inspector)")
    if shutil.which("node") is None:
        pytest.skip("node is not installed; the MCP Inspector needs it")
    return INSPECTOR


def run_inspector(
    inspector: Path, agent: Path, work: Path, *method: str, serve: tuple[str, ...] = ()
) -> dict[str, Any]:
    result = subprocess.run(
        [
            str(inspector),
            "--cli",
            "-e",
            f"PI_CODING_AGENT_DIR={agent}",
            PCT,
            "serve",
            *serve,
            *method,
        ],
        cwd=work,
        env=child_env(agent),
        capture_output=True,
        text=True,
        timeout=90,
        check=False,
    )
    assert result.returncode == 0, result.stderr or result.stdout
    parsed: dict[str, Any] = json.loads(result.stdout)
    return parsed


def test_inspector_lists_and_calls_tools(inspector: Path, tmp_path: Path) -> None:
    agent, work = tmp_path / "agent", tmp_path / "work"
    work.mkdir()
    write_config(agent, {"applyPatch": {"enabled": True}, "shellSessions": {"enabled": True}})

    listed = run_inspector(inspector, agent, work, "--method", "tools/list")
    tools = listed["tools"]
    assert isinstance(tools, list)
    assert [t["name"] for t in tools] == ["apply_patch", "exec_command", "write_stdin"]
    assert tools[0]["inputSchema"]["required"] == ["patch"]

    called = run_inspector(
        inspector,
        agent,
        work,
        "--method",
        "tools/call",
        "--tool-name",
        "exec_command",
        "--tool-arg",
        "cmd=echo inspected-by-the-inspector",
    )
    assert called["isError"] is False
    session = called["_meta"]["pct/details"]["session_id"]
    assert called["content"] == [
        {
            "type": "text",
            "text": f"session_id {session}: completed\nexit_code: 0\n"
            "[stdout]\ninspected-by-the-inspector",
        }
    ]
    assert "structuredContent" not in called
    details = called["_meta"]["pct/details"]
    assert details["exit_code"] == 0
    assert details["stdout"] == "inspected-by-the-inspector\n"
    assert "sessionId" not in details
    assert "exitCode" not in details


def test_structured_content_is_an_opt_in(inspector: Path, tmp_path: Path) -> None:
    agent, work = tmp_path / "agent", tmp_path / "work"
    work.mkdir()
    write_config(agent, {"shellSessions": {"enabled": True}})
    called = run_inspector(
        inspector,
        agent,
        work,
        "--method",
        "tools/call",
        "--tool-name",
        "exec_command",
        "--tool-arg",
        "cmd=echo opted-in",
        serve=("--structured-content",),
    )
    assert called["isError"] is False
    assert "opted-in" in called["content"][0]["text"]
    assert called["structuredContent"] == called["_meta"]["pct/details"]
    assert called["structuredContent"]["exit_code"] == 0
