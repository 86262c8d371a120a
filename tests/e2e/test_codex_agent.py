"""A real agent drives pct: Codex CLI (`codex exec`) with pct attached as its MCP server.

The model is a fake Responses server on 127.0.0.1 that scripts tool calls through Codex's
MCP namespace: `apply_patch`, an `exec_command` still running when it yields, the
`write_stdin` poll that completes it, and a Code Mode `exec`. The test proves the calls ran
in pct from the server side, and that every `function_call_output` Codex sent back — what
the model reads — is pct's result text, not a JSON dump of its details.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest
from fake_responses import FakeResponses, assistant_message, function_call
from pct_procs import PCT, write_config
from result_texts import CELL, CONFIG, PATCH, POLL_YIELD_MS, SHELL, check_outputs, running_session

from tests.node_tools import node_bin

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

_found = node_bin("codex")
CODEX = Path(_found) if _found else None
NAMESPACE = "mcp__pct"


def _tool_names(body: dict[str, object]) -> list[str]:
    names: list[str] = []
    for tool in body.get("tools", []) or []:  # type: ignore[union-attr]
        if isinstance(tool, dict):
            inner = tool.get("tools")
            if isinstance(inner, list):
                names.extend(
                    f"{tool.get('name')}/{t.get('name')}" for t in inner if isinstance(t, dict)
                )
            else:
                names.append(str(tool.get("name") or tool.get("type")))
    return names


def server_env(agent: Path) -> str:
    """The pct server's environment as a TOML inline table body.

    Codex starts stdio servers with a reduced environment; `PYTHONPATH` is passed on when
    set so a checkout that is not the installed one serves its own code.
    """
    env = {"PI_CODING_AGENT_DIR": str(agent)}
    if os.environ.get("PYTHONPATH"):
        env["PYTHONPATH"] = os.environ["PYTHONPATH"]
    return ", ".join(f"{key} = {json.dumps(value)}" for key, value in env.items())


def codex_config(port: int, agent: Path, work: Path) -> str:
    return "\n".join(
        [
            'model = "fake-model"',
            'model_provider = "fake"',
            'web_search = "disabled"',
            "[analytics]",
            "enabled = false",
            "[features]",
            "plugins = false",
            "tool_search_always_defer_mcp_tools = false",
            "[model_providers.fake]",
            'name = "Fake Responses"',
            f'base_url = "http://127.0.0.1:{port}/v1"',
            'wire_api = "responses"',
            'env_key = "FAKE_KEY"',
            "request_max_retries = 0",
            "stream_max_retries = 0",
            "[mcp_servers.pct]",
            f"command = {json.dumps(PCT)}",
            'args = ["serve"]',
            f"cwd = {json.dumps(str(work))}",
            f"env = {{ {server_env(agent)} }}",
            "startup_timeout_sec = 30",
            "required = true",
            "tool_timeout_sec = 30",
            'default_tools_approval_mode = "approve"',
            "",
        ]
    )


def _poll(outputs: list[str]) -> dict[str, object]:
    """The `write_stdin` call for the session the previous output reported running."""
    session = running_session(outputs)
    if session is None:
        return assistant_message("no running session to poll")
    args = {"session_id": session, "yield_time_ms": POLL_YIELD_MS}
    return function_call("call_poll", "write_stdin", args, NAMESPACE)


def test_codex_reads_pct_result_texts(tmp_path: Path) -> None:
    if CODEX is None:
        pytest.skip("Codex CLI not installed (npm @openai/codex)")
    if shutil.which("node") is None:
        pytest.skip("node is not installed; the Codex CLI launcher needs it")
    agent, work, home = tmp_path / "agent", tmp_path / "work", tmp_path / "codex-home"
    work.mkdir()
    home.mkdir()
    write_config(agent, CONFIG)
    steps = [
        function_call("call_patch", "apply_patch", {"patch": PATCH}, NAMESPACE),
        function_call("call_shell", "exec_command", SHELL, NAMESPACE),
        _poll,
        function_call("call_cell", "exec", {"code": CELL}, NAMESPACE),
        assistant_message("All done."),
    ]
    with FakeResponses(steps) as fake:
        (home / "config.toml").write_text(codex_config(fake.port, agent, work), encoding="utf-8")
        env = {
            "PATH": str(Path(PCT).parent) + ":/usr/local/bin:/usr/bin:/bin",
            "HOME": str(tmp_path),
            "CODEX_HOME": str(home),
            "FAKE_KEY": "x",
        }
        result = subprocess.run(
            [
                str(CODEX),
                "exec",
                "--skip-git-repo-check",
                "--ephemeral",
                "--strict-config",
                "--json",
                "-C",
                str(work),
                "Create a file, run a command, poll it, then run a cell.",
            ],
            env=env,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=180,
            check=False,
        )
        diagnostics = (
            f"exit {result.returncode}\nstdout:\n{result.stdout[-3000:]}\n"
            f"stderr:\n{result.stderr[-3000:]}\n"
            f"tools: {_tool_names(fake.requests[0]) if fake.requests else None}"
        )
        # Codex listed pct's tools in its namespace on the first model request.
        first_tools = fake.requests[0].get("tools", []) if fake.requests else []
        namespaces = [
            t for t in first_tools if t.get("type") == "namespace" and t.get("name") == NAMESPACE
        ]
        assert namespaces, diagnostics
        names = {t["name"] for t in namespaces[0]["tools"]}
        assert {"apply_patch", "exec_command", "write_stdin", "exec", "wait"} <= names, diagnostics
        outputs = fake.tool_outputs()
    diagnostics += "\noutputs:\n" + "\n---\n".join(outputs)
    print(diagnostics)  # with -s: what Codex sent the model
    check_outputs(outputs, work, diagnostics)
