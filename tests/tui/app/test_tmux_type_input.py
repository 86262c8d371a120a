"""Through real processes at 80×24: the operator types a password into an agent's job.

The console runs in tmux; an MCP client spawns `pct serve` on stdio as an agent does and
starts a job that reads a line from stdin. The operator opens the job's viewer in the
console, presses `i` and types; the job reads the line, the agent's next poll says only how
many bytes were typed, and the bytes are nowhere in the agent dir.
"""

from __future__ import annotations

import asyncio
import sys
import uuid
from pathlib import Path

import pytest

from tests.tui.app.test_tmux import PCT_TUI, TMUX, _screen, _tmux, _wait, console_env, start_console

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.skipif(TMUX is None, reason="tmux is not installed (apt-get install tmux)"),
    pytest.mark.skipif(not PCT_TUI.exists(), reason="pct-tui is not installed in this venv"),
]

SECRET = "tmux-s3cret"


def test_the_operator_types_into_an_agents_job(tmp_path: Path) -> None:
    sys.path.insert(0, str(Path(__file__).parents[2] / "e2e"))
    from live_support import agent_client  # the e2e helpers import as top-level modules

    agent = tmp_path / "agent"
    (agent / "extensions").mkdir(parents=True)
    (agent / "extensions" / "pi-codex-toolkit.json").write_text(
        '{"shellSessions": {"enabled": true}}\n'
    )
    work = tmp_path / "work"
    work.mkdir()
    socket = f"pct-test-{uuid.uuid4().hex[:8]}"
    env = console_env(agent)
    start_console(socket, env, (80, 24), f"{PCT_TUI}; sleep 20")

    def keys(*pressed: str) -> None:
        _tmux(socket, "send-keys", "-t", "pct", *pressed)

    async def drive() -> None:
        async with agent_client(agent, work) as session:
            cmd = 'echo "Password:"; read pw; echo "got ${#pw} chars"; sleep 60'
            first = await session.call_tool("exec_command", {"cmd": cmd, "yield_time_ms": 500})
            job = (first.meta or {})["pct/details"]["session_id"]
            keys("4")
            await asyncio.to_thread(_wait, socket, job)
            keys("Down", "Down", "Down", "Enter")  # this console, the serve, its session, job
            await asyncio.to_thread(_wait, socket, "Type to stdin")
            keys("i")
            await asyncio.to_thread(_wait, socket, "typed into stdin, not shown")
            _tmux(socket, "send-keys", "-t", "pct", "-l", SECRET)
            assert SECRET not in _screen(socket)  # masked
            keys("Enter")
            await asyncio.to_thread(_wait, socket, "got 11 chars")
            polled = await session.call_tool("write_stdin", {"session_id": job, "chars": ""})
            text = polled.content[0].text  # type: ignore[union-attr]
            assert (
                "stdin: the operator typed 12 bytes from a pct console attached over live "
                "control (pct-tui); they are not shown to you" in text
            ), text
            assert SECRET not in text
            keys("Escape")
            await session.call_tool("write_stdin", {"session_id": job, "terminate": True})

    try:
        _wait(socket, "Configuration loaded")
        asyncio.run(drive())
        assert "Traceback" not in _screen(socket)
    finally:
        _tmux(socket, "kill-server")
        if str(Path(__file__).parents[2] / "e2e") in sys.path:
            sys.path.remove(str(Path(__file__).parents[2] / "e2e"))
    held = [p for p in agent.rglob("*") if p.is_file() and SECRET.encode() in p.read_bytes()]
    assert held == []
