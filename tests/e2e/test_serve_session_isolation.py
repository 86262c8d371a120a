"""Two clients of one `pct serve --http` never reach each other's shell jobs, on any protocol
revision: handshake clients get a runtime session each; the stateless 2026-07-28 revision
has no sessions, so its clients are refused the tools that keep state between calls."""

from __future__ import annotations

import re
from pathlib import Path

import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp_types.version import LATEST_MODERN_VERSION
from pct_procs import http_server, text_of

pytestmark = pytest.mark.e2e

SESSION_TOOLS = ("exec_command", "write_stdin", "exec", "wait")


def client_for(url: str, token: str, mode: str) -> Client:
    http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=30)
    return Client(streamable_http_client(url, http_client=http), mode=mode)  # type: ignore[arg-type]


def _job_id(text: str) -> str:
    found = re.match(r"session_id (\S+): running", text)
    assert found, text
    return found.group(1)


async def test_stateless_clients_cannot_reach_each_others_jobs(dirs: tuple[Path, Path]) -> None:
    agent, work = dirs
    with http_server(agent, work) as (url, proc):
        token = (agent / "pct" / "token").read_text().strip()
        async with (
            client_for(url, token, LATEST_MODERN_VERSION) as first,
            client_for(url, token, LATEST_MODERN_VERSION) as second,
        ):
            names = [tool.name for tool in (await first.list_tools()).tools]
            assert names == ["apply_patch"]
            for client in (first, second):
                refused = await client.call_tool(
                    "exec_command", {"cmd": "sleep 30", "yield_time_ms": 250}
                )
                assert refused.is_error
                assert text_of(refused) == (
                    "exec_command needs an MCP session, and this client uses protocol "
                    f"revision {LATEST_MODERN_VERSION}, which has none: pct keeps shell jobs "
                    "and Code Mode cells private to one session. Connect with the initialize "
                    "handshake (protocol 2025-11-25 or earlier) to use it."
                )
            poke = await second.call_tool(
                "write_stdin", {"session_id": "pct-shell-0", "terminate": True}
            )
            assert poke.is_error
            assert text_of(poke).startswith("write_stdin needs an MCP session")
            patch = "*** Begin Patch\n*** Add File: stateless.txt\n+ok\n*** End Patch"
            applied = await second.call_tool("apply_patch", {"patch": patch})
            assert text_of(applied) == "Applied patch:\n- add stateless.txt"
        assert proc.poll() is None


async def test_handshake_clients_get_a_session_each(dirs: tuple[Path, Path]) -> None:
    agent, work = dirs
    with http_server(agent, work) as (url, _proc):
        token = (agent / "pct" / "token").read_text().strip()
        async with (
            client_for(url, token, "legacy") as first,
            client_for(url, token, "legacy") as second,
        ):
            started = await first.call_tool(
                "exec_command", {"cmd": "sleep 30", "yield_time_ms": 250}
            )
            job = _job_id(text_of(started))
            poke = await second.call_tool("write_stdin", {"session_id": job, "terminate": True})
            assert poke.is_error, text_of(poke)
            polled = await first.call_tool("write_stdin", {"session_id": job, "yield_time_ms": 250})
            assert not polled.is_error
            assert text_of(polled).startswith(f"session_id {job}: running")  # not terminated
