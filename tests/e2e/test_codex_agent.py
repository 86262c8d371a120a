"""A real agent drives pct: Codex CLI (`codex exec`) with pct attached as its MCP server.

The model is a fake Responses server on 127.0.0.1 that scripts two tool calls — an
`apply_patch` and an `exec_command` — through Codex's MCP namespace. The test proves the
calls ran in pct from the server side: the file exists, and the shell output pct produced
is what Codex sent back to the model.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest
from fake_responses import FakeResponses, assistant_message, function_call
from pct_procs import PCT, write_config

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
            f"env = {{ PI_CODING_AGENT_DIR = {json.dumps(str(agent))} }}",
            "startup_timeout_sec = 30",
            "required = true",
            "tool_timeout_sec = 30",
            'default_tools_approval_mode = "approve"',
            "",
        ]
    )


def test_codex_applies_a_patch_and_runs_a_command_through_pct(tmp_path: Path) -> None:
    if CODEX is None:
        pytest.skip("Codex CLI not installed (npm @openai/codex)")
    if shutil.which("node") is None:
        pytest.skip("node is not installed; the Codex CLI launcher needs it")
    agent, work, home = tmp_path / "agent", tmp_path / "work", tmp_path / "codex-home"
    work.mkdir()
    home.mkdir()
    write_config(agent, {"applyPatch": {"enabled": True}, "shellSessions": {"enabled": True}})
    patch = (
        "*** Begin Patch\n*** Add File: from_codex.txt\n+written by codex via pct\n*** End Patch"
    )
    steps = [
        function_call("call_patch", "apply_patch", {"patch": patch}, NAMESPACE),
        function_call(
            "call_shell",
            "exec_command",
            {"cmd": "cat from_codex.txt && echo pct-shell-ok"},
            NAMESPACE,
        ),
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
                "Create from_codex.txt, then show it.",
            ],
            env=env,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=150,
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
        assert {"apply_patch", "exec_command", "write_stdin"} <= names, diagnostics
        outputs = fake.tool_outputs()
    # Server-side proof: the patch was applied by pct in its working directory ...
    assert (work / "from_codex.txt").read_text() == "written by codex via pct\n", diagnostics
    # ... and the shell ran in pct and its output travelled back to the model.
    # (Codex 0.171 forwards an MCP result's structured content, pct's details, when present.)
    diagnostics += f"\noutputs: {outputs}"
    assert any(
        ("Applied patch:\n- add from_codex.txt" in out)
        or ('"operation":"add","path":"from_codex.txt"' in out)
        for out in outputs
    ), diagnostics
    assert any("written by codex via pct" in out and "pct-shell-ok" in out for out in outputs), (
        diagnostics
    )
