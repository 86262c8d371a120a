"""`SessionServices.peek`: viewers reach a session's shared managers without building any."""

from __future__ import annotations

from pathlib import Path

from pct_runtime.capabilities.shell import ShellManager
from pct_runtime.runtime import Runtime


async def test_peek_returns_built_managers_only(tmp_path: Path) -> None:
    agent = tmp_path / "agent"
    (agent / "extensions").mkdir(parents=True)
    async with Runtime(agent_dir=agent, cwd=tmp_path) as runtime:
        session = await runtime.open_session("mcp")
        assert isinstance(session.services.peek("shell"), ShellManager)
        assert session.services.peek("no-such-thing") is None
        assert "no-such-thing" not in session.services._shared  # peek never builds
