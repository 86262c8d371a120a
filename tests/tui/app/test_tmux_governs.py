"""Through real processes at 80×24: the console's Save governs an agent's stdio `pct serve`.

The console runs in tmux; an MCP client spawns `pct serve` on stdio as an agent does. The
operator turns Shell Sessions off in Config and saves; that agent's next `tools/list` no
longer has `exec_command` — nobody ran `pct reload`.
"""

from __future__ import annotations

import asyncio
import json
import sys
import time
import uuid
from pathlib import Path

import pytest

from pct_runtime.config import parse_config
from pct_tui.state.drafts import ConfigDraft
from tests.tui.app.test_tmux import PCT_TUI, TMUX, _screen, _tmux, _wait, console_env, start_console

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.skipif(TMUX is None, reason="tmux is not installed (apt-get install tmux)"),
    pytest.mark.skipif(not PCT_TUI.exists(), reason="pct-tui is not installed in this venv"),
]

CONFIG = '{"shellSessions": {"enabled": true}}\n'


def _downs_to_shell() -> int:
    """How far down the Config menu Shell Sessions is (the menu's own order)."""
    config = parse_config(json.loads(CONFIG))
    labels = [item.label for item in ConfigDraft.start(config, "r", {}).menu()]
    return next(i for i, label in enumerate(labels) if label.startswith("Shell Sessions"))


async def _tools(session: object) -> set[str]:
    listed = await session.list_tools()  # type: ignore[attr-defined]
    return {tool.name for tool in listed.tools}


def test_console_save_turns_shell_off_in_an_agents_stdio_serve(tmp_path: Path) -> None:
    sys.path.insert(0, str(Path(__file__).parents[2] / "e2e"))
    from live_support import agent_client  # the e2e helpers import as top-level modules

    agent = tmp_path / "agent"
    (agent / "extensions").mkdir(parents=True)
    config = agent / "extensions" / "pi-codex-toolkit.json"
    config.write_text(CONFIG)
    work = tmp_path / "work"
    work.mkdir()
    socket = f"pct-test-{uuid.uuid4().hex[:8]}"
    env = console_env(agent)
    start_console(socket, env, (80, 24), f"{PCT_TUI}; sleep 20")

    async def drive() -> None:
        async with agent_client(agent, work) as session:
            assert "exec_command" in await _tools(session)
            _tmux(socket, "send-keys", "-t", "pct", "4")
            await asyncio.to_thread(_wait, socket, "pct serve (stdio)")  # the console found it
            _tmux(socket, "send-keys", "-t", "pct", "2")
            await asyncio.to_thread(_wait, socket, "Shell Sessions: on")
            for _ in range(_downs_to_shell()):
                _tmux(socket, "send-keys", "-t", "pct", "Down")
            _tmux(socket, "send-keys", "-t", "pct", "Enter")
            await asyncio.to_thread(_wait, socket, "Shell Sessions: off")
            _tmux(socket, "send-keys", "-t", "pct", "C-s")
            await asyncio.to_thread(_wait, socket, "reloaded")
            deadline = time.monotonic() + 30
            tools = await _tools(session)
            while "exec_command" in tools and time.monotonic() < deadline:
                await asyncio.sleep(0.2)
                tools = await _tools(session)
            assert "exec_command" not in tools, _screen(socket)

    try:
        _wait(socket, "Configuration loaded")
        asyncio.run(drive())
        assert json.loads(config.read_text())["shellSessions"]["enabled"] is False
        assert "Traceback" not in _screen(socket)
    finally:
        _tmux(socket, "kill-server")
        if str(Path(__file__).parents[2] / "e2e") in sys.path:
            sys.path.remove(str(Path(__file__).parents[2] / "e2e"))
