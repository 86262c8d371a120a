"""A real agent drives pct: Claude Code (`claude -p`) with pct attached over `--mcp-config`.

The model is a fake Anthropic Messages API on 127.0.0.1 (`ANTHROPIC_BASE_URL`, streamed SSE)
that scripts the same four calls as the Codex test. Claude Code hands the model a result's
structured content in place of its text when there is any, so this proves pct sends none:
every `tool_result` block it posts back is pct's result text. Fully offline: telemetry,
updates and other non-essential traffic are off, HOME and the config dir are private.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest
from fake_messages import FakeMessages, text_reply, tool_use
from pct_procs import PCT, write_config
from result_texts import CELL, CONFIG, PATCH, POLL_YIELD_MS, SHELL, check_outputs, running_session

from tests.node_tools import WHERE, node_bin

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

_found = node_bin("claude")
CLAUDE = Path(_found) if _found else None
PREFIX = "mcp__pct__"
TOOLS = ["apply_patch", "exec_command", "write_stdin", "exec", "wait"]


def _poll(results: list[str]) -> list[dict[str, object]]:
    session = running_session(results)
    if session is None:
        return text_reply("no running session to poll")
    args = {"session_id": session, "yield_time_ms": POLL_YIELD_MS}
    return tool_use("toolu_poll", f"{PREFIX}write_stdin", args)


def mcp_config(agent: Path) -> str:
    env = {"PI_CODING_AGENT_DIR": str(agent)}
    if os.environ.get("PYTHONPATH"):  # a checkout that is not the installed one
        env["PYTHONPATH"] = os.environ["PYTHONPATH"]
    server = {"type": "stdio", "command": PCT, "args": ["serve"], "env": env}
    return json.dumps({"mcpServers": {"pct": server}})


def offline_env(home: Path, base_url: str) -> dict[str, str]:
    return {
        "PATH": str(Path(PCT).parent) + ":/usr/local/bin:/usr/bin:/bin",
        "HOME": str(home),
        "CLAUDE_CONFIG_DIR": str(home / ".claude"),
        "ANTHROPIC_BASE_URL": base_url,
        "ANTHROPIC_API_KEY": "test",
        "DISABLE_TELEMETRY": "1",
        "DISABLE_AUTOUPDATER": "1",
        "DISABLE_ERROR_REPORTING": "1",
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        # Claude Code 2.1.19x connects MCP servers in the background: without this its first
        # request goes out before pct has answered and offers the model no pct tool.
        "MCP_CONNECTION_NONBLOCKING": "false",
    }


def test_claude_code_reads_pct_result_texts(tmp_path: Path) -> None:
    if CLAUDE is None:
        pytest.skip(f"Claude Code not installed (npm @anthropic-ai/claude-code in {WHERE})")
    if shutil.which("node") is None:
        pytest.skip("node is not installed; Claude Code needs it")
    agent, work, home = tmp_path / "agent", tmp_path / "work", tmp_path / "home"
    work.mkdir()
    home.mkdir()
    write_config(agent, CONFIG)
    config = tmp_path / "mcp.json"
    config.write_text(mcp_config(agent), encoding="utf-8")
    steps = [
        tool_use("toolu_patch", f"{PREFIX}apply_patch", {"patch": PATCH}),
        tool_use("toolu_shell", f"{PREFIX}exec_command", SHELL),
        _poll,
        tool_use("toolu_cell", f"{PREFIX}exec", {"code": CELL}),
        text_reply("All done."),
    ]
    with FakeMessages(steps, tool_prefix=PREFIX) as fake:
        result = subprocess.run(
            [
                str(CLAUDE),
                "-p",
                "--mcp-config",
                str(config),
                "--strict-mcp-config",
                "--allowedTools",
                ",".join(PREFIX + name for name in TOOLS),
                "--output-format",
                "json",
                "Create a file, run a command, poll it, then run a cell.",
            ],
            cwd=work,
            env=offline_env(home, fake.url),
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=180,
            check=False,
        )
        requests = [path for path, _ in fake.requests]
        offered = [
            t.get("name")
            for _, body in fake.requests
            for t in body.get("tools") or []
            if str(t.get("name", "")).startswith(PREFIX)
        ]
        results = fake.tool_results()
    diagnostics = (
        f"exit {result.returncode}\nstdout:\n{result.stdout[-3000:]}\n"
        f"stderr:\n{result.stderr[-3000:]}\nrequests: {requests}\n"
        "tool results:\n" + "\n---\n".join(results)
    )
    assert result.returncode == 0, diagnostics
    # Claude Code offered pct's tools to the model under its MCP names.
    assert {PREFIX + name for name in TOOLS} <= set(offered), diagnostics
    check_outputs(results, work, diagnostics)
