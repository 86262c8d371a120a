"""A sandboxed job cannot reach pct's own ports to escape its sandbox.

Under `--sandbox workspace-write --sandbox-network` a job that got hold of the token (pct's
state is masked in the sandbox now; here the test leaks a copy) can connect to loopback: it
subscribed to its runtime's live control as a console (and could answer its own approvals),
and called the MCP HTTP endpoint to run commands outside the sandbox. Both now refuse a peer
inside a sandbox; an unsandboxed client still works; with network off the connection is not
even made.
"""

from __future__ import annotations

import json
import shutil
import socket
import sys
from pathlib import Path

import httpx
import pytest
from pct_procs import HEADERS, INITIALIZED, exec_request, http_server, initialize_request

from pct_runtime.host.system.peers import REFUSED
from pct_runtime.host.system.sandbox.linux import landlock_abi

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux mechanism"),
    pytest.mark.skipif(landlock_abi() < 3, reason="no Landlock ABI 3: no sandbox to escape"),
]

#: The subscribe acceptance line as the job prints it.
ACCEPTED = 'CONTROL {"ok": true'

#: What a model could run inside its sandbox: the token, the registry, both ports.
ESCAPE = r"""
import glob, json, os, socket, urllib.request, urllib.error
import sys
leak = sys.argv[1]
token = open(os.path.join(leak, "token")).read().strip()
for path in glob.glob(os.path.join(leak, "runtimes", "*.json")):
    entry = json.load(open(path))
    host, port = entry["control"].rsplit(":", 1)
    try:
        conn = socket.create_connection((host, int(port)), timeout=10)
        conn.sendall(json.dumps({"token": token, "op": "subscribe", "version": 1}).encode() + b"\n")
        print("CONTROL", conn.makefile().readline().strip())
    except OSError as exc:
        print("CONTROL-ERROR", type(exc).__name__, exc)
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "escape", "version": "1"}}}).encode()
    req = urllib.request.Request(entry["mcp"], data=body, headers={
        "Authorization": "Bearer " + token, "Content-Type": "application/json",
        "Accept": "application/json, text/event-stream"})
    try:
        with urllib.request.urlopen(req, timeout=10) as reply:
            print("MCP", reply.status, reply.read(300))
    except urllib.error.HTTPError as exc:
        print("MCP", exc.code, exc.read().decode())
    except OSError as exc:
        print("MCP-ERROR", type(exc).__name__, exc)
"""


def _initialize(http: httpx.Client, url: str, auth: dict[str, str]) -> dict[str, str]:
    opened = http.post(url, json=initialize_request("agent"), headers=auth)
    assert opened.status_code == 200, opened.text
    headers = {**auth, "Mcp-Session-Id": opened.headers["mcp-session-id"]}
    http.post(url, json=INITIALIZED, headers=headers)
    return headers


def _load(path: Path) -> dict[str, object]:
    loaded: dict[str, object] = json.loads(path.read_text(encoding="utf-8"))
    return loaded


def _text(reply: httpx.Response) -> str:
    assert reply.status_code == 200, reply.text
    data = next(ln for ln in reply.text.splitlines() if ln.startswith("data: "))
    return str(json.loads(data[6:])["result"]["content"][0]["text"])


def _run_escape(agent: Path, work: Path, *sandbox: str) -> str:
    """Start a sandboxed `pct serve --http`, run ESCAPE through it; the job's output."""
    script = work / "escape.py"
    script.write_text(ESCAPE, encoding="utf-8")
    with http_server(agent, work, *sandbox) as (url, proc):
        token = (agent / "pct" / "token").read_text().strip()
        leak = work / "leak"  # what the job could not read itself
        shutil.copytree(agent / "pct" / "runtimes", leak / "runtimes")
        (leak / "token").write_text(token, encoding="utf-8")
        auth = {**HEADERS, "Authorization": f"Bearer {token}"}
        with httpx.Client(timeout=60) as http:
            headers = _initialize(http, url, auth)  # an unsandboxed client is served
            call = exec_request(f"{sys.executable} {script} {leak}", 2, yield_time_ms=30000)
            reply = http.post(url, json=call, headers=headers)
            assert reply.status_code == 200, reply.text
            output = latest = _text(reply)
            # A loaded machine can pause the job longer than the call's quiet wait: poll
            # it to its end, so every attempt it makes is in the output.
            session_id = latest.split()[1].rstrip(":")
            for request_id in range(3, 20):
                if "job still running" not in latest:
                    break
                args = {"session_id": session_id, "yield_time_ms": 30000}
                poll = {"name": "write_stdin", "arguments": args}
                call = {"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": poll}
                latest = _text(http.post(url, json=call, headers=headers))
                output += latest
            # The unsandboxed side still controls the runtime after the attempt.
            entries = (agent / "pct" / "runtimes").glob("*.json")
            entry = next(e for e in map(_load, entries) if e["pid"] == proc.pid)
            host, port = str(entry["control"]).rsplit(":", 1)
            with socket.create_connection((host, int(port)), timeout=10) as conn:
                conn.sendall(json.dumps({"token": token, "op": "ping"}).encode() + b"\n")
                assert json.loads(conn.makefile().readline())["ok"] is True
    return output


def test_a_sandboxed_job_with_network_cannot_subscribe_or_call_mcp(
    dirs: tuple[Path, Path],
) -> None:
    agent, work = dirs
    output = _run_escape(agent, work, "--sandbox", "workspace-write", "--sandbox-network")
    assert f"CONTROL {json.dumps({'ok': False, 'error': REFUSED})}" in output
    assert "MCP 403" in output
    assert REFUSED in output
    assert ACCEPTED not in output
    assert "protocolVersion" not in output


def test_with_network_off_the_job_cannot_connect_at_all(dirs: tuple[Path, Path]) -> None:
    agent, work = dirs
    output = _run_escape(agent, work, "--sandbox", "workspace-write")
    assert "CONTROL-ERROR PermissionError" in output
    assert "MCP-ERROR" in output
    assert "MCP 200" not in output
    assert ACCEPTED not in output


def test_an_unsandboxed_runtime_is_reached_as_before(dirs: tuple[Path, Path]) -> None:
    """Without a sandbox the job is the user: nothing is refused (the check is specific)."""
    agent, work = dirs
    output = _run_escape(agent, work)
    assert ACCEPTED in output
    assert "MCP 200" in output
    assert REFUSED not in output


def test_a_sandboxed_job_cannot_reach_another_unsandboxed_runtime(
    dirs: tuple[Path, Path],
) -> None:
    """The other runtime (as pct-tui's would be) runs unconfined: its port is the prize."""
    agent, work = dirs
    with http_server(agent, work):
        output = _run_escape(agent, work, "--sandbox", "workspace-write", "--sandbox-network")
    assert output.count(f"CONTROL {json.dumps({'ok': False, 'error': REFUSED})}") == 2
    assert output.count("MCP 403") == 2
    assert ACCEPTED not in output
    assert "MCP 200" not in output
