"""Helpers for end-to-end tests: a private agent dir, and `pct serve` processes that are reaped."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import mcp_types as types

PCT = shutil.which("pct", path=str(Path(sys.executable).parent)) or "pct"


def text_of(result: types.CallToolResult) -> str:
    """The text of a tool result's first content block."""
    block = result.content[0]
    assert isinstance(block, types.TextContent)
    return block.text


def write_config(agent_dir: Path, obj: Any) -> None:
    path = agent_dir / "extensions" / "pi-codex-toolkit.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(obj), encoding="utf-8")


def child_env(agent_dir: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "PCT_TOKEN"}
    env["PI_CODING_AGENT_DIR"] = str(agent_dir)
    env.update(extra)
    return env


@contextlib.contextmanager
def http_server(
    agent_dir: Path, cwd: Path, *args: str, listen: str = "127.0.0.1:0", **env: str
) -> Iterator[tuple[str, subprocess.Popen[str]]]:
    """Spawn `pct serve --http LISTEN`; yield (url, process); always reap it."""
    proc = subprocess.Popen(
        [PCT, "serve", "--http", listen, *args],
        cwd=cwd,
        env=child_env(agent_dir, **env),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        assert proc.stderr is not None
        deadline = time.monotonic() + 30
        url = ""
        while time.monotonic() < deadline:
            line = proc.stderr.readline()
            if not line:
                break
            if "serving MCP at " in line:
                url = line.split("serving MCP at ", 1)[1].split()[0]
                break
        if not url:
            raise RuntimeError(f"pct serve --http did not start (exit {proc.poll()})")
        yield url, proc
    finally:
        stop(proc)


def stop(proc: subprocess.Popen[Any]) -> None:
    if proc.poll() is None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(10)
    if proc.stderr is not None:
        proc.stderr.close()
