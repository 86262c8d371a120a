"""Set-up shared by the live-control e2e tests: an agent's stdio `pct serve` driven by the MCP
client, and a `LiveClient` console on the same agent dir (not a test module)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import mcp_types as types
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from pct_procs import PCT, child_env

from pct_runtime.serve.client.live_client import LiveClient, Snapshot, Update
from pct_runtime.serve.client.running import control_token
from pct_runtime.serve.live.control import list_runtimes

AGENT = types.Implementation(name="test-agent", version="7.1")
CODE_CONFIG = {
    "applyPatch": {"enabled": True},
    "shellSessions": {"enabled": True},
    "codeMode": {"enabled": True, "approvalMode": "confirm"},
}


def agent_params(agent: Path, work: Path) -> StdioServerParameters:
    return StdioServerParameters(command=PCT, args=["serve"], env=child_env(agent), cwd=work)


def agent_client(agent: Path, work: Path, **kw: Any) -> Client:
    return Client(agent_params(agent, work), mode="legacy", client_info=AGENT, **kw)


async def connect(agent: Path, role: str = "console") -> LiveClient:
    """The console's view: the one registered runtime (registered before MCP is served)."""
    (entry,) = await asyncio.to_thread(list_runtimes, agent)
    assert entry.transport == "stdio"
    return await LiveClient.connect(entry, control_token(agent), role=role)  # type: ignore[arg-type]


async def first(updates: AsyncIterator[Update], check: Callable[[Update], bool]) -> Any:
    async def find() -> Update:
        async for update in updates:
            if check(update):
                return update
        raise AssertionError("the runtime went away")

    return await asyncio.wait_for(find(), 30)


def snapshot(check: Callable[[Snapshot], bool]) -> Callable[[Update], bool]:
    return lambda u: isinstance(u, Snapshot) and check(u)
