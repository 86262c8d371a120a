"""`pct serve --http`: the official client over streamable HTTP, token auth and hostile input."""

from __future__ import annotations

import asyncio
import stat
import subprocess
from pathlib import Path

import httpx
import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from pct_procs import PCT, child_env, http_server, text_of

pytestmark = pytest.mark.e2e

INIT = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "probe", "version": "1"},
    },
}
HEADERS = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}


def client_for(url: str, token: str) -> Client:
    http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=30)
    return Client(streamable_http_client(url, http_client=http), mode="legacy")


async def official_round_trip(url: str, token: str, work: Path) -> None:
    async with client_for(url, token) as client:
        names = [t.name for t in (await client.list_tools()).tools]
        assert names == ["apply_patch", "exec_command", "write_stdin"]
        patch = "*** Begin Patch\n*** Add File: web.txt\n+over http\n*** End Patch"
        assert text_of(await client.call_tool("apply_patch", {"patch": patch})) == (
            "Applied patch:\n- add web.txt"
        )
        ran = await client.call_tool("exec_command", {"cmd": "cat web.txt"})
        assert "over http" in text_of(ran)
        # Over HTTP too: the text is the content, the details ride in `_meta`.
        assert ran.structured_content is None
        assert ran.meta is not None
        assert ran.meta["pct/details"]["stdout"] == "over http\n"
    assert (work / "web.txt").read_text() == "over http\n"


async def test_http_round_trip_with_the_token_file(dirs: tuple[Path, Path]) -> None:
    agent, work = dirs
    with http_server(agent, work) as (url, _proc):
        assert url.startswith("http://127.0.0.1:")
        assert url.endswith("/mcp")
        token_file = agent / "pct" / "token"
        assert stat.S_IMODE(token_file.stat().st_mode) == 0o600
        await official_round_trip(url, token_file.read_text().strip(), work)
        # the client's DELETE ended its MCP session, and with it the runtime session
        live = await asyncio.to_thread(
            subprocess.run,
            [PCT, "status", "--live"],
            env=child_env(agent),
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        assert live.returncode == 0, live.stderr
        assert f"pct serve (pid {_proc.pid}, {url})" in live.stdout
        assert "Sessions: 0" in live.stdout


async def test_pct_token_env_overrides_the_file(dirs: tuple[Path, Path]) -> None:
    agent, work = dirs
    with http_server(agent, work, PCT_TOKEN="env-chosen-token") as (url, _proc):
        await official_round_trip(url, "env-chosen-token", work)
        file_token = (agent / "pct" / "token").read_text().strip()  # control channel's
        async with httpx.AsyncClient(timeout=30) as http:
            refused = await http.post(
                url, json=INIT, headers={**HEADERS, "Authorization": f"Bearer {file_token}"}
            )
        assert refused.status_code == 401


async def test_hostile_requests_get_clear_errors_and_the_server_keeps_serving(
    dirs: tuple[Path, Path],
) -> None:
    agent, work = dirs
    with http_server(agent, work) as (url, proc):
        token = (agent / "pct" / "token").read_text().strip()
        auth = {**HEADERS, "Authorization": f"Bearer {token}"}
        async with httpx.AsyncClient(timeout=30) as http:
            missing = await http.post(url, json=INIT, headers=HEADERS)
            assert missing.status_code == 401
            assert missing.headers["www-authenticate"].startswith("Bearer")
            assert "missing or wrong bearer token" in missing.json()["error"]["message"]

            wrong = await http.post(
                url, json=INIT, headers={**HEADERS, "Authorization": "Bearer nope"}
            )
            assert wrong.status_code == 401
            scheme = await http.post(
                url, json=INIT, headers={**HEADERS, "Authorization": f"Basic {token}"}
            )
            assert scheme.status_code == 401

            host = await http.post(url, json=INIT, headers={**auth, "Host": "evil.example"})
            assert host.status_code == 421
            assert host.text == "Invalid Host header"
            origin = await http.post(
                url, json=INIT, headers={**auth, "Origin": "http://evil.example"}
            )
            assert origin.status_code == 403
            assert origin.text == "Invalid Origin header"

            malformed = await http.post(url, content=b"{not json", headers=auth)
            assert malformed.status_code == 400
            assert malformed.json()["error"]["code"] == -32700

            oversized = await http.post(url, content=b"x" * (5 * 1024 * 1024), headers=auth)
            assert oversized.status_code == 413

        async with client_for(url, token) as client:
            unknown = await client.call_tool("format_disk", {})
            assert unknown.is_error
            assert text_of(unknown).startswith("Unknown tool: format_disk.")
            invalid = await client.call_tool("exec_command", {"cmd": "true", "tty": True})
            assert invalid.is_error
            assert "tty" in text_of(invalid)
            not_object = await client.call_tool("apply_patch", {"patch": 5})
            assert not_object.is_error

        assert proc.poll() is None
        await official_round_trip(url, token, work)
