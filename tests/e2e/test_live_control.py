"""Live control of a real `pct serve`: every malformed request is answered, and the status
of a runtime with many sessions reaches `pct status --live` whole."""

from __future__ import annotations

import asyncio
import json
import subprocess
from pathlib import Path

import httpx
import pytest
from pct_procs import PCT, child_env, http_server

pytestmark = pytest.mark.e2e

HEADERS = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}


def _control_address(agent: Path) -> tuple[str, int]:
    (entry,) = list((agent / "pct" / "runtimes").glob("*.json"))
    host, _, port = json.loads(entry.read_text())["control"].rpartition(":")
    return host, int(port)


async def _exchange(address: tuple[str, int], payload: bytes) -> bytes:
    reader, writer = await asyncio.open_connection(*address)
    try:
        writer.write(payload)
        await writer.drain()
        return await asyncio.wait_for(reader.read(), 30)
    finally:
        writer.close()


async def test_every_malformed_control_request_gets_an_error_line(
    dirs: tuple[Path, Path],
) -> None:
    agent, work = dirs
    with http_server(agent, work) as (_url, proc):
        address = _control_address(agent)
        token = (agent / "pct" / "token").read_text().strip()
        cases = {
            b'{"op":"reload","token":["x"]}\n': "malformed request: token must be a string",
            b'{"op":5,"token":"x"}\n': "malformed request: op must be a string",
            b"{not json\n": "malformed request: not JSON",
            b"[1, 2]\n": "malformed request: expected a JSON object",
            b"\xff\xfe\n": "malformed request: not JSON",
            b"\n": "malformed request: empty request line",
            b"x" * 200_000 + b"\n": "malformed request: request line longer than 65536 bytes",
            json.dumps({"op": "format", "token": token}).encode() + b"\n": "unknown op 'format'",
            json.dumps({"op": "reload", "token": "wrong"}).encode() + b"\n": "unauthorized",
        }
        for payload, expected in cases.items():
            raw = await _exchange(address, payload)
            assert raw.endswith(b"\n"), (payload[:40], raw)
            reply = json.loads(raw)
            assert reply["ok"] is False
            assert reply["error"].startswith(expected), (payload[:40], reply)
        ping = json.loads(
            await _exchange(address, json.dumps({"op": "ping", "token": token}).encode() + b"\n")
        )
        assert ping == {"ok": True}
        assert proc.poll() is None


async def _open_sessions(url: str, token: str, count: int) -> list[str]:
    """`count` MCP sessions, each with its runtime session (made by its first tools/list)."""
    auth = {**HEADERS, "Authorization": f"Bearer {token}"}
    gate = asyncio.Semaphore(16)
    init = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "many", "version": "1"},
        },
    }

    async def one(http: httpx.AsyncClient) -> str:
        async with gate:
            opened = await http.post(url, json=init, headers=auth)
            assert opened.status_code == 200, opened.text
            sid = opened.headers["mcp-session-id"]
            headers = {**auth, "Mcp-Session-Id": sid, "Mcp-Protocol-Version": "2025-06-18"}
            note = {"jsonrpc": "2.0", "method": "notifications/initialized"}
            assert (await http.post(url, json=note, headers=headers)).status_code == 202
            listed = await http.post(
                url, json={"jsonrpc": "2.0", "id": 2, "method": "tools/list"}, headers=headers
            )
            assert listed.status_code == 200, listed.text
            return sid

    limits = httpx.Limits(max_connections=16)
    async with httpx.AsyncClient(timeout=120, limits=limits) as http:
        return list(await asyncio.gather(*(one(http) for _ in range(count))))


async def test_live_status_of_a_thousand_sessions(dirs: tuple[Path, Path]) -> None:
    agent, work = dirs
    with http_server(agent, work) as (url, proc):
        token = (agent / "pct" / "token").read_text().strip()
        await _open_sessions(url, token, 1000)
        live = await asyncio.to_thread(
            subprocess.run,
            [PCT, "status", "--live"],
            env=child_env(agent),
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        assert live.returncode == 0, live.stderr
        assert "Sessions: 1000" in live.stdout
        assert live.stdout.count("\nSession ") == 1000
        assert proc.poll() is None
