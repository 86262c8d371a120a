"""Every tool description reaches the model whole.

Claude Code cuts an MCP tool's description at 2,048 characters, so anything past that never
reaches a Claude model; the nested-tools help of `exec` lives in its `uses` parameter for
that reason. Checked with and without a sandbox (whose sentence names the writable roots)
and with a long working directory.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from pct_runtime.capabilities.apply_patch.tool import DESCRIPTION as APPLY_PATCH
from pct_runtime.capabilities.code.tools import WAIT_DESCRIPTION, exec_description
from pct_runtime.capabilities.discovery.tool import FIND_TOOLS_DESCRIPTION
from pct_runtime.capabilities.shell.tools import (
    EXEC_COMMAND_DESCRIPTION,
    WRITE_STDIN_DESCRIPTION,
    exec_command_description,
)
from pct_runtime.host.system.sandbox import Sandbox, SandboxSettings

CLAUDE_CODE_LIMIT = 2048


def _sandbox(mode: str, cwd: Path) -> Sandbox:
    return Sandbox(SandboxSettings(mode=mode), cwd)  # type: ignore[arg-type]


@pytest.mark.parametrize("mode", ["read-only", "workspace-write", "danger-full-access"])
def test_descriptions_fit_claude_codes_limit(mode: str, tmp_path: Path) -> None:
    cwd = tmp_path / ("a-rather-long-project-directory-name" * 3)
    cwd.mkdir()
    sandbox = _sandbox(mode, cwd)
    texts = {
        "apply_patch": APPLY_PATCH,
        "exec_command": EXEC_COMMAND_DESCRIPTION,
        "exec_command (sandbox)": exec_command_description(sandbox),
        "write_stdin": WRITE_STDIN_DESCRIPTION,
        "exec": exec_description(sandbox),
        "wait": WAIT_DESCRIPTION,
        "find_tools": FIND_TOOLS_DESCRIPTION,
    }
    for name, text in texts.items():
        assert len(text) <= CLAUDE_CODE_LIMIT, f"{name}: {len(text)} characters"
