"""Over MCP (official client, in-process memory streams): a load changes that session's
`tools/list`, sends `notifications/tools/list_changed`, and the loaded tool is callable —
also by a client that never refreshes its list."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import mcp_types as types
from discovery_support import discovery, write_config
from mcp import Client

from pct_runtime.runtime import Runtime
from pct_runtime.serve.mcp.server import PctMCPServer

CFG = discovery(["apply_patch"], applyPatch={"enabled": True})
PATCH = "*** Begin Patch\n*** Add File: found.txt\n+loaded through find_tools\n*** End Patch"


def text_of(result: types.CallToolResult) -> str:
    block = result.content[0]
    assert isinstance(block, types.TextContent)
    return block.text


async def make(root: Path) -> tuple[Runtime, PctMCPServer]:
    write_config(root, CFG)
    (root / "work").mkdir(exist_ok=True)
    runtime = Runtime(agent_dir=root / "agent", cwd=root / "work")
    await runtime.start()
    return runtime, PctMCPServer(runtime)


async def test_load_notifies_lists_and_calls(tmp_path: Path) -> None:
    runtime, server = await make(tmp_path)
    changed = asyncio.Event()

    async def on_message(message: Any) -> None:
        if isinstance(message, types.ToolListChangedNotification):
            changed.set()

    async with Client(server.server, mode="legacy", message_handler=on_message) as client:
        listed = {t.name: t for t in (await client.list_tools()).tools}
        assert "apply_patch" not in listed
        finder = listed["find_tools"]
        assert finder.title == "Find Tools"
        assert finder.input_schema["additionalProperties"] is False

        hidden = await client.call_tool("apply_patch", {"patch": PATCH})
        assert hidden.is_error
        assert "find_tools" in text_of(hidden)

        query = await client.call_tool("find_tools", {"query": "patch"})
        assert not query.is_error
        assert text_of(query).startswith("Matches (1):\n- apply_patch [eligible] ")

        loaded = await client.call_tool("find_tools", {"load": ["apply_patch", "bash"]})
        assert not loaded.is_error
        assert text_of(loaded) == "Loaded: apply_patch\nRejected:\n- bash: not-managed"
        assert loaded.structured_content is None
        assert loaded.meta == {
            "pct/details": {
                "loaded": ["apply_patch"],
                "rejected": [{"name": "bash", "reason": "not-managed"}],
            }
        }
        await asyncio.wait_for(changed.wait(), 5)

        names = [t.name for t in (await client.list_tools()).tools]
        assert names == ["find_tools", "apply_patch"]
        result = await client.call_tool("apply_patch", {"patch": PATCH})
        assert not result.is_error, text_of(result)
        assert (tmp_path / "work" / "found.txt").read_text() == "loaded through find_tools\n"

        malformed = await client.call_tool("find_tools", {})
        assert malformed.is_error
        assert text_of(malformed) == "find_tools requires a query or a non-empty load list."
    await runtime.aclose()


async def test_a_client_that_never_refreshes_can_call_a_loaded_name(tmp_path: Path) -> None:
    runtime, server = await make(tmp_path)
    async with Client(server.server, mode="legacy") as client:
        loaded = await client.call_tool("find_tools", {"load": ["apply_patch"]})
        assert text_of(loaded) == "Loaded: apply_patch"
        result = await client.call_tool("apply_patch", {"patch": PATCH})
        assert not result.is_error, text_of(result)
    # A new connection is a new session: the name is hidden again.
    async with Client(server.server, mode="legacy") as client:
        assert "apply_patch" not in [t.name for t in (await client.list_tools()).tools]
    await runtime.aclose()


async def test_loads_are_per_connection(tmp_path: Path) -> None:
    runtime, server = await make(tmp_path)
    async with (
        Client(server.server, mode="legacy") as first,
        Client(server.server, mode="legacy") as second,
    ):
        await first.call_tool("find_tools", {"load": ["apply_patch"]})
        assert "apply_patch" in [t.name for t in (await first.list_tools()).tools]
        assert "apply_patch" not in [t.name for t in (await second.list_tools()).tools]
    await runtime.aclose()
