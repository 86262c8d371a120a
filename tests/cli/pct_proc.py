"""Run the real `pct` process against a temporary agent dir (helpers for tests/cli)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path


def write_config(agent: Path, text: str) -> Path:
    path = agent / "extensions" / "pi-codex-toolkit.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def run_pct(
    agent: Path, *args: str, stdin: str = "", cwd: Path | None = None, timeout: float = 60
) -> subprocess.CompletedProcess[str]:
    """`pct ARGS...` as a user runs it: its own process, stdin a pipe, output captured."""
    env = {**os.environ, "PI_CODING_AGENT_DIR": str(agent)}
    return subprocess.run(
        [sys.executable, "-m", "pct_runtime.cli", *args],
        input=stdin,
        capture_output=True,
        text=True,
        env=env,
        cwd=cwd or agent.parent,
        timeout=timeout,
    )
