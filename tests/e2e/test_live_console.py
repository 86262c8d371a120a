"""An agent's stdio `pct serve` seen, driven and approved through live control.

Each test runs a real `pct serve` on stdio, driven by the MCP Python client as an agent
would, and a `LiveClient` (what pct-tui builds on) on the same agent dir.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from pathlib import Path
from typing import Any

import httpx2
import mcp_types as types
import pytest
from live_support import AGENT, CODE_CONFIG, agent_client, connect, first, snapshot
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from pct_procs import http_server, text_of, write_config

from pct_runtime.serve.client.live_client import (
    ApprovalClosed,
    ApprovalInfo,
    LiveClient,
)
from pct_runtime.serve.client.running import control_token
from pct_runtime.serve.live.control import list_runtimes
from pct_runtime.serve.live.protocol import READ_ONLY_MESSAGE

pytestmark = pytest.mark.e2e

PATCH = "*** Begin Patch\n*** Add File: notes/todo.md\n+first line\n*** End Patch"
DENIED = "*** Begin Patch\n*** Add File: notes/denied.md\n+never\n*** End Patch"


async def test_console_lists_follows_and_stops_an_agents_job(dirs: tuple[Path, Path]) -> None:
    agent, work = dirs
    async with agent_client(agent, work) as mcp:
        await mcp.list_tools()
        live = await connect(agent)
        monitor = await connect(agent, "monitor")
        updates = live.updates()
        snap = await first(
            updates, snapshot(lambda s: bool(s.sessions and s.sessions[0].client_name))
        )
        (session,) = snap.sessions
        assert (session.client_name, session.client_version) == ("test-agent", "7.1")
        assert (snap.runtime.kind, snap.runtime.transport, snap.runtime.mcp) == (
            "serve",
            "stdio",
            "stdio",
        )
        cmd = "for i in $(seq 1 3000); do echo line-$i; done; sleep 60"
        started = await mcp.call_tool("exec_command", {"cmd": cmd, "yield_time_ms": 300})
        job_id = started.meta["pct/details"]["session_id"]  # type: ignore[index]
        snap = await first(updates, snapshot(lambda s: bool(s.work)))
        (job,) = snap.work
        assert (job.id, job.kind, job.session_id, job.state) == (
            job_id,
            "shell",
            session.id,
            "running",
        )

        text: list[str] = []
        follow = live.follow(job_id)

        async def until_last_line() -> None:
            async for chunk in follow:
                assert chunk.offset == sum(map(len, text))  # nothing skipped
                text.append(chunk.data)
                if "line-3000\n" in "".join(text[-2:]):
                    return

        await asyncio.wait_for(until_last_line(), 30)
        assert "".join(text) == "".join(f"line-{i}\n" for i in range(1, 3001))

        refused = await monitor.stop(job_id)
        assert (refused.ok, refused.message) == (False, READ_ONLY_MESSAGE)
        stopped = await live.stop(job_id)
        assert stopped.ok, stopped.message
        rest = [chunk async for chunk in follow]
        assert rest[-1].ended
        await first(updates, snapshot(lambda s: s.work[0].state == "terminated"))
        polled = await mcp.call_tool("write_stdin", {"session_id": job_id})
        assert "terminated" in text_of(polled)
        # The model learns a person stopped it, so it does not just rerun it.
        assert text_of(polled).splitlines()[2] == (
            "stopped by the operator from a pct console attached over live control (pct-tui), "
            "not by you; do not rerun this command without asking the user"
        )
        assert polled.meta["pct/details"]["stopped_by"] == "live_console"  # type: ignore[index]
        again = await live.stop(job_id)
        assert (again.ok, again.message) == (False, f"{job_id} has already ended (terminated)")

        refused = await monitor.end_session(session.id)
        assert (refused.ok, refused.message) == (False, READ_ONLY_MESSAGE)
        ended = await live.end_session(session.id)
        assert ended.ok, ended.message
        await first(updates, snapshot(lambda s: not s.sessions))
        await monitor.aclose()
        await live.aclose()


async def _exec(mcp: Client, patch: str) -> asyncio.Future[types.CallToolResult]:
    code = f"r = await tools.apply_patch({patch!r})\nr"
    return asyncio.ensure_future(mcp.call_tool("exec", {"code": code}))


async def test_nested_patch_approved_in_the_console_and_denied(dirs: tuple[Path, Path]) -> None:
    agent, work = dirs
    write_config(agent, CODE_CONFIG)
    async with agent_client(agent, work) as mcp:
        await mcp.list_tools()
        live = await connect(agent)
        other = await connect(agent)
        updates, other_updates = live.updates(), other.updates()
        await first(updates, snapshot(lambda s: bool(s.sessions)))

        call = await _exec(mcp, PATCH)
        asked: ApprovalInfo = await first(updates, lambda u: isinstance(u, ApprovalInfo))
        assert asked.kind == "confirm"
        assert asked.client == "test-agent 7.1"
        assert asked.runtime_pid == live.runtime.pid
        assert asked.session_id is not None
        (diff,) = asked.diffs
        assert diff.path == "notes/todo.md"
        assert "+first line" in diff.diff
        assert (await live.answer(asked.request_id, True)).ok
        result = await asyncio.wait_for(call, 30)
        assert not result.is_error, text_of(result)
        assert (work / "notes" / "todo.md").read_text() == "first line\n"
        closed = await first(other_updates, lambda u: isinstance(u, ApprovalClosed))
        assert closed == ApprovalClosed(asked.request_id, "answered")  # the other modal closes

        call = await _exec(mcp, DENIED)
        asked = await first(other_updates, lambda u: isinstance(u, ApprovalInfo))
        assert (await other.answer(asked.request_id, False)).ok
        result = await asyncio.wait_for(call, 30)
        assert "approval-denied" in text_of(result)
        assert not (work / "notes" / "denied.md").exists()
        late = await live.answer(asked.request_id, True)  # the first answer won
        assert not late.ok
        await live.aclose()
        await other.aclose()


async def test_console_leaving_fails_the_nested_patch_unavailable(dirs: tuple[Path, Path]) -> None:
    agent, work = dirs
    write_config(agent, CODE_CONFIG)
    async with agent_client(agent, work) as mcp:
        await mcp.list_tools()
        live = await connect(agent)
        updates = live.updates()
        await first(updates, snapshot(lambda s: bool(s.sessions)))
        call = await _exec(mcp, PATCH)
        await first(updates, lambda u: isinstance(u, ApprovalInfo))
        await live.aclose()  # the console quits with the question open
        result = await asyncio.wait_for(call, 30)
        assert "approval-unavailable" in text_of(result)
        assert not (work / "notes").exists()


async def test_console_leaving_falls_back_to_elicitation(dirs: tuple[Path, Path]) -> None:
    agent, work = dirs
    write_config(agent, CODE_CONFIG)
    elicited: list[str] = []

    async def accept(context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        elicited.append(params.message)
        return types.ElicitResult(action="accept", content={"approve": True})

    async with agent_client(agent, work, elicitation_callback=accept) as mcp:
        await mcp.list_tools()
        live = await connect(agent)
        updates = live.updates()
        await first(updates, snapshot(lambda s: bool(s.sessions)))
        call = await _exec(mcp, PATCH)
        await first(updates, lambda u: isinstance(u, ApprovalInfo))
        assert elicited == []  # the console is asked first
        await live.aclose()
        result = await asyncio.wait_for(call, 30)
        assert not result.is_error, text_of(result)
        assert elicited
        assert elicited[0].startswith("Code Mode: apply patch?")
        assert (work / "notes" / "todo.md").read_text() == "first line\n"


async def test_a_stuck_console_does_not_hold_up_the_agent(dirs: tuple[Path, Path]) -> None:
    agent, work = dirs
    async with agent_client(agent, work) as mcp:
        await mcp.list_tools()
        (entry,) = await asyncio.to_thread(list_runtimes, agent)
        host, _, port = entry.control.rpartition(":")
        reader, writer = await asyncio.open_connection(host, int(port))
        token = control_token(agent)
        request = {"token": token, "op": "subscribe", "version": 1, "role": "console"}
        writer.write(json.dumps(request).encode() + b"\n")
        await writer.drain()
        assert json.loads(await reader.readline())["ok"] is True
        # ... and never reads again, while the agent makes output and events.
        try:
            for i in range(40):
                cmd = f"head -c 20000 /dev/zero | tr '\\0' x; echo {i}"
                done = await asyncio.wait_for(mcp.call_tool("exec_command", {"cmd": cmd}), 30)
                assert text_of(done).rstrip().endswith(str(i))
        finally:
            writer.close()
            with contextlib.suppress(Exception):
                await writer.wait_closed()


async def test_console_follows_and_stops_a_code_cell(dirs: tuple[Path, Path]) -> None:
    agent, work = dirs
    write_config(agent, CODE_CONFIG)
    async with agent_client(agent, work) as mcp:
        await mcp.list_tools()
        live = await connect(agent)
        updates = live.updates()
        await first(updates, snapshot(lambda s: bool(s.sessions)))
        code = "for i in range(200):\n    print('cell-line', i)\nwhile True:\n    pass"
        started = await mcp.call_tool("exec", {"code": code, "yield_time_ms": 500})
        assert "running" in text_of(started), text_of(started)
        snap = await first(updates, snapshot(lambda s: bool(s.work)))
        (cell,) = snap.work
        assert (cell.kind, cell.state, cell.title) == ("cell", "running", "for i in range(200):")
        text = ""
        follow = live.follow(cell.id)
        async for chunk in follow:
            text += chunk.data
            if "cell-line 199\n" in text:
                break
        assert text == "".join(f"cell-line {i}\n" for i in range(200))
        assert (await live.stop(cell.id)).ok
        rest = [chunk async for chunk in follow]
        assert rest[-1].ended
        done = await first(updates, snapshot(lambda s: s.work[0].state != "running"))
        assert done.work[0].state == "terminated"
        waited = await mcp.call_tool("wait", {"cell_id": cell.id})
        lines = text_of(waited).splitlines()
        assert lines[0] == f"cell_id {cell.id}: terminated"
        assert lines[1] == (
            "stopped by the operator from a pct console attached over live control (pct-tui), "
            "not by you; do not rerun this program without asking the user"
        )
        assert waited.meta["pct/details"]["stopped_by"] == "live_console"  # type: ignore[index]
        await live.aclose()


async def test_console_sees_each_http_client_as_a_session(dirs: tuple[Path, Path]) -> None:
    agent, work = dirs
    with http_server(agent, work) as (url, _proc):
        token = control_token(agent)
        http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=30)
        transport = streamable_http_client(url, http_client=http)
        async with Client(transport, mode="legacy", client_info=AGENT) as mcp:
            await mcp.list_tools()
            (entry,) = await asyncio.to_thread(list_runtimes, agent)
            assert (entry.transport, entry.mcp) == ("http", url)
            live = await LiveClient.connect(entry, token, role="monitor")
            snap = await first(live.updates(), snapshot(lambda s: bool(s.sessions)))
            assert snap.runtime.transport == "http"
            (session,) = snap.sessions
            assert (session.client_name, session.client_version) == ("test-agent", "7.1")
            await live.aclose()
