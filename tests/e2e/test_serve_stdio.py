"""`pct serve` over stdio, driven by the official MCP Python client; live reload/status."""

from __future__ import annotations

import asyncio
import subprocess
from pathlib import Path

import mcp_types as types
import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from pct_procs import PCT, child_env, text_of, write_config

pytestmark = pytest.mark.e2e


def params(agent: Path, work: Path, *args: str) -> StdioServerParameters:
    return StdioServerParameters(
        # child_env keeps PYTHONPATH, so a checkout that is not the installed one serves itself.
        command=PCT,
        args=["serve", *args],
        env=child_env(agent),
        cwd=work,
    )


def pct(agent: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [PCT, *args], env=child_env(agent), capture_output=True, text=True, timeout=60, check=False
    )


async def test_stdio_round_trip_patch_and_shell(dirs: tuple[Path, Path]) -> None:
    agent, work = dirs
    async with Client(params(agent, work), mode="legacy") as client:
        names = [t.name for t in (await client.list_tools()).tools]
        assert names == ["apply_patch", "exec_command", "write_stdin"]
        patch = "*** Begin Patch\n*** Add File: hello.txt\n+hi there\n*** End Patch"
        applied = await client.call_tool("apply_patch", {"patch": patch})
        assert text_of(applied) == "Applied patch:\n- add hello.txt"
        ran = await client.call_tool("exec_command", {"cmd": "cat hello.txt"})
        assert "hi there" in text_of(ran)
        assert ran.structured_content is None
        assert ran.meta is not None
        assert ran.meta["pct/details"]["exit_code"] == 0
        inactive = await client.call_tool("exec", {"code": "print(1)"})
        assert inactive.is_error
        assert text_of(inactive) == "Code Mode is not enabled."
    assert (work / "hello.txt").read_text() == "hi there\n"


async def test_tools_allowlist(dirs: tuple[Path, Path]) -> None:
    agent, work = dirs
    async with Client(params(agent, work, "--tools", "apply_patch"), mode="legacy") as client:
        assert [t.name for t in (await client.list_tools()).tools] == ["apply_patch"]
        refused = await client.call_tool("exec_command", {"cmd": "true"})
        assert text_of(refused) == "Shell Sessions are not enabled."


async def test_live_reload_and_status_reach_the_running_server(dirs: tuple[Path, Path]) -> None:
    agent, work = dirs
    changed = asyncio.Event()

    async def on_message(message: object) -> None:
        if isinstance(message, types.ToolListChangedNotification):
            changed.set()

    async with Client(params(agent, work), mode="legacy", message_handler=on_message) as client:
        await client.list_tools()
        live = await asyncio.to_thread(pct, agent, "status", "--live")
        assert live.returncode == 0, live.stderr
        assert "pct serve (pid " in live.stdout
        assert "MCP tools: apply_patch, exec_command, write_stdin" in live.stdout
        assert "Apply Patch:" in live.stdout

        write_config(agent, {"applyPatch": {"enabled": True}})
        reloaded = await asyncio.to_thread(pct, agent, "reload")
        assert reloaded.returncode == 0, reloaded.stderr
        assert reloaded.stdout.startswith("pct serve (pid ")
        assert reloaded.stdout.rstrip().endswith(": Pi Codex Toolkit configuration reloaded.")
        await asyncio.wait_for(changed.wait(), 10)
        assert [t.name for t in (await client.list_tools()).tools] == ["apply_patch"]

        (agent / "extensions" / "pi-codex-toolkit.json").write_text("{", encoding="utf-8")
        broken = await asyncio.to_thread(pct, agent, "reload")
        assert broken.returncode == 1
        assert broken.stderr.rstrip().endswith(
            ": Pi Codex Toolkit config error: invalid-json (line 1 column 2); "
            "using last known good settings."
        )
        # the last known good projection stays
        assert [t.name for t in (await client.list_tools()).tools] == ["apply_patch"]
    # the server exited with its client: its registry entry is gone, reload validates the file
    after = await asyncio.to_thread(pct, agent, "reload")
    assert after.returncode == 1
    assert (
        after.stderr.strip()
        == "Pi Codex Toolkit config error: invalid-json (line 1 column 2); using all-off defaults."
    )
    assert list((agent / "pct" / "runtimes").glob("*.json")) == []


async def test_status_live_without_a_runtime(dirs: tuple[Path, Path]) -> None:
    agent, _ = dirs
    result = await asyncio.to_thread(pct, agent, "status", "--live")
    assert result.returncode == 1
    assert "no running pct runtime" in result.stderr
