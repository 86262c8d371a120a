"""`Slots.peek`: viewers reach a session's shared managers without building any."""

from __future__ import annotations

from pathlib import Path

from pct_runtime.capabilities.context import Key
from pct_runtime.capabilities.shell import ShellManager
from pct_runtime.capabilities.shell.descriptor import SHELL
from pct_runtime.runtime import Runtime


async def test_peek_returns_built_managers_only(tmp_path: Path) -> None:
    agent = tmp_path / "agent"
    (agent / "extensions").mkdir(parents=True)
    async with Runtime(agent_dir=agent, cwd=tmp_path) as runtime:
        session = await runtime.open_session("mcp")
        assert isinstance(session.slots.peek(SHELL), ShellManager)
        unused: Key[object] = Key("no-such-thing")
        assert session.slots.peek(unused) is None
        assert session.slots.peek(unused) is None  # peek never builds
