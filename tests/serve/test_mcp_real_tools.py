"""The real capabilities behind the MCP server: apply_patch, the shell pair, Code Mode."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import mcp_types as types
import pytest
from mcp import Client

from pct_runtime.capabilities.shell.descriptor import SHELL
from pct_runtime.invocation import InvocationHooks
from pct_runtime.runtime import Runtime
from pct_runtime.serve.mcp.server import PctMCPServer


def text_of(result: types.CallToolResult) -> str:
    block = result.content[0]
    assert isinstance(block, types.TextContent)
    return block.text


@pytest.fixture
def workdir(tmp_path: Path) -> Path:
    agent = tmp_path / "agent"
    (agent / "extensions").mkdir(parents=True)
    (agent / "extensions" / "pi-codex-toolkit.json").write_text(
        json.dumps(
            {
                "applyPatch": {"enabled": True},
                "shellSessions": {"enabled": True},
                "codeMode": {"enabled": True, "approvalMode": "always"},
            }
        ),
        encoding="utf-8",
    )
    work = tmp_path / "work"
    work.mkdir()
    return tmp_path


async def make(root: Path, **kw: Any) -> tuple[Runtime, PctMCPServer]:
    runtime = Runtime(agent_dir=root / "agent", cwd=root / "work", **kw)
    await runtime.start()
    return runtime, PctMCPServer(runtime)


async def test_tools_list_shows_the_enabled_capabilities(workdir: Path) -> None:
    runtime, server = await make(workdir)
    async with Client(server.server, mode="legacy") as client:
        listed = {t.name: t for t in (await client.list_tools()).tools}
        assert {"apply_patch", "exec_command", "write_stdin", "exec", "wait"} <= set(listed)
        assert listed["apply_patch"].input_schema["required"] == ["patch"]
    await runtime.aclose()


async def test_apply_patch_over_mcp_changes_the_file(workdir: Path) -> None:
    runtime, server = await make(workdir)
    patch = "*** Begin Patch\n*** Add File: notes/todo.md\n+first line\n*** End Patch"
    async with Client(server.server, mode="legacy") as client:
        result = await client.call_tool("apply_patch", {"patch": patch})
        assert not result.is_error, text_of(result)
        assert text_of(result) == "Applied patch:\n- add notes/todo.md"
        assert (workdir / "work" / "notes" / "todo.md").read_text() == "first line\n"
        assert result.structured_content is None
        assert result.meta is not None
        assert result.meta["pct/details"]["operations"] == [
            {"operation": "add", "path": "notes/todo.md"}
        ]
        bad = await client.call_tool("apply_patch", {"patch": "not a patch"})
        assert bad.is_error
        unknown = await client.call_tool("apply_patch", {"patch": patch, "extra": 1})
        assert unknown.is_error
    await runtime.aclose()


async def test_shell_pair_over_mcp(workdir: Path) -> None:
    runtime, server = await make(workdir)
    async with Client(server.server, mode="legacy") as client:
        done = await client.call_tool("exec_command", {"cmd": "echo hello-from-pct"})
        assert not done.is_error, text_of(done)
        assert "hello-from-pct" in text_of(done)

        started = await client.call_tool("exec_command", {"cmd": "cat", "yield_time_ms": 200})
        assert not started.is_error, text_of(started)
        assert started.structured_content is None
        assert started.meta is not None
        details = started.meta["pct/details"]
        session_id = details["session_id"]
        assert isinstance(session_id, str)
        assert "sessionId" not in details
        assert text_of(started).startswith(
            f"session_id {session_id}: running\njob still running; continue with write_stdin, "
            "not wait"
        )
        echoed = await client.call_tool(
            "write_stdin",
            {
                "session_id": session_id,
                "chars": "ping\n",
                "closeStdin": True,
                "yield_time_ms": 2000,
            },
        )
        assert not echoed.is_error, text_of(echoed)
        assert "ping" in text_of(echoed)

        invalid = await client.call_tool("exec_command", {"cmd": "true", "yield_time_ms": -1})
        assert invalid.is_error
        assert "yield_time_ms" in text_of(invalid)
    await runtime.aclose()


async def test_shell_jobs_end_with_the_connection(workdir: Path) -> None:
    runtime, server = await make(workdir)
    async with Client(server.server, mode="legacy") as client:
        started = await client.call_tool("exec_command", {"cmd": "sleep 30", "yield_time_ms": 100})
        assert not started.is_error, text_of(started)
        session = runtime.sessions[0]
        manager = session.slots.peek(SHELL)
        assert manager.unsettled_count == 1
    assert manager.closed
    assert manager.unsettled_count == 0
    await runtime.aclose()


async def test_hooks_env_reaches_the_shell(workdir: Path) -> None:
    calls: list[dict[str, Any]] = []

    def context(call: Any) -> Any:
        calls.append(dict(call))
        return {"env": {"PCT_HOOK_VALUE": "from-hook"}}

    runtime, server = await make(workdir, hooks=InvocationHooks(context=context))
    async with Client(server.server, mode="legacy") as client:
        result = await client.call_tool("exec_command", {"cmd": "echo value=$PCT_HOOK_VALUE"})
        assert "value=from-hook" in text_of(result)
        again = await client.call_tool("exec_command", {"cmd": "echo again=$PCT_HOOK_VALUE"})
        assert "again=from-hook" in text_of(again)
    assert len(calls) == 2  # applied once per call, not twice
    assert calls[0]["tool"] == "exec_command"
    assert "cmd" not in calls[0]
    await runtime.aclose()


@pytest.mark.slow
async def test_code_mode_cell_over_mcp(workdir: Path) -> None:
    runtime, server = await make(workdir)
    async with Client(server.server, mode="legacy") as client:
        result = await client.call_tool("exec", {"code": "print(6 * 7)"})
        assert not result.is_error, text_of(result)
        assert "42" in text_of(result)
        missing = await client.call_tool("wait", {"cell_id": "cell-000000000000"})
        assert missing.is_error
        assert "cell-000000000000" in text_of(missing)
    await runtime.aclose()


async def test_a_cell_gets_the_details_mcp_carries_in_meta(workdir: Path) -> None:
    """One details object, one spelling: the nested dict is `_meta["pct/details"]`."""
    runtime, server = await make(workdir)
    async with Client(server.server, mode="legacy") as client:
        direct = await client.call_tool("exec_command", {"cmd": "echo same"})
        assert direct.meta is not None
        meta = direct.meta["pct/details"]
        code = "r = await tools.exec_command(cmd='echo same')\n{k: r[k] for k in sorted(r)}"
        cell = await client.call_tool("exec", {"code": code})
        assert not cell.is_error, text_of(cell)
        assert cell.meta is not None
        nested = cell.meta["pct/details"]["result"]
        assert nested.keys() == meta.keys()
        assert {k: v for k, v in nested.items() if k != "session_id"} == {
            k: v for k, v in meta.items() if k != "session_id"
        }
        assert not any(any(c.isupper() for c in key) for key in [*meta, *cell.meta["pct/details"]])
    await runtime.aclose()
