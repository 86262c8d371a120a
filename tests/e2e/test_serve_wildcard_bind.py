"""`pct serve --http 0.0.0.0:PORT`: a warning names the exposure, the token is required, and a
client that reaches one of this machine's own non-loopback addresses is served (not 421).

Only addresses of this machine are contacted: they are read from the kernel's own tables.
"""

from __future__ import annotations

import ipaddress
import itertools
import socket
import subprocess
from pathlib import Path

import httpx
import pytest
from pct_procs import PCT, child_env, stop

pytestmark = pytest.mark.e2e

INIT = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "lan", "version": "1"},
    },
}
HEADERS = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}


def own_ipv4_addresses() -> list[str]:
    """This machine's non-loopback IPv4 addresses (Linux: the LOCAL routes of fib_trie)."""
    try:
        lines = Path("/proc/net/fib_trie").read_text().splitlines()
    except OSError:
        return []
    found: list[str] = []
    for previous, line in itertools.pairwise(lines):
        if "/32 host LOCAL" in line:
            text = previous.strip().removeprefix("|-- ").strip()
            try:
                address = ipaddress.ip_address(text)
            except ValueError:
                continue
            if not address.is_loopback and text not in found:
                found.append(text)
    return found


def own_global_ipv6_addresses() -> list[str]:
    """This machine's global-scope IPv6 addresses (Linux: /proc/net/if_inet6)."""
    try:
        rows = Path("/proc/net/if_inet6").read_text().splitlines()
    except OSError:
        return []
    found: list[str] = []
    for row in rows:
        fields = row.split()
        if len(fields) >= 4 and fields[3] == "00":  # scope: global
            found.append(str(ipaddress.IPv6Address(bytes.fromhex(fields[0]))))
    return found


def _spawn(agent: Path, work: Path, listen: str) -> tuple[subprocess.Popen[str], list[str]]:
    proc = subprocess.Popen(
        [PCT, "serve", "--http", listen],
        cwd=work,
        env=child_env(agent),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    assert proc.stderr is not None
    lines: list[str] = []
    while line := proc.stderr.readline():
        lines.append(line)
        if "serving MCP at " in line:
            break
    return proc, lines


def test_wildcard_bind_warns_and_serves_this_machines_addresses(
    dirs: tuple[Path, Path],
) -> None:
    addresses = own_ipv4_addresses()
    if not addresses:
        pytest.skip("this machine has no non-loopback IPv4 address")
    agent, work = dirs
    proc, lines = _spawn(agent, work, "0.0.0.0:0")
    try:
        assert lines, "pct serve printed nothing"
        assert "serving MCP at http://0.0.0.0:" in lines[-1], lines
        port = int(lines[-1].split("http://0.0.0.0:", 1)[1].split("/", 1)[0])
        warning = "".join(lines[:-1])
        assert f"pct: warning: serving on 0.0.0.0:{port}, which is not loopback" in warning
        assert "holds the token can run commands" in warning
        token = (agent / "pct" / "token").read_text().strip()
        auth = {**HEADERS, "Authorization": f"Bearer {token}"}
        with httpx.Client(timeout=30) as http:
            for address in addresses:
                url = f"http://{address}:{port}/mcp"
                assert http.post(url, json=INIT, headers=HEADERS).status_code == 401
                served = http.post(url, json=INIT, headers=auth)
                assert served.status_code == 200, (address, served.status_code, served.text)
                assert "mcp-session-id" in served.headers
                origin = http.post(url, json=INIT, headers={**auth, "Origin": f"http://{address}"})
                assert origin.status_code == 200, origin.text
            url = f"http://{addresses[0]}:{port}/mcp"
            name = http.post(
                url, json=INIT, headers={**auth, "Host": f"{socket.gethostname()}:{port}"}
            )
            assert name.status_code == 200, name.text
            # Names and addresses that are not this machine's stay refused (only a header:
            # nothing is sent to them).
            for foreign in ("evil.example", "203.0.113.9", "0.0.0.0"):
                refused = http.post(url, json=INIT, headers={**auth, "Host": f"{foreign}:{port}"})
                assert refused.status_code == 421, foreign
                assert refused.text == "Invalid Host header"
            bad_origin = http.post(
                url, json=INIT, headers={**auth, "Origin": "http://evil.example"}
            )
            assert bad_origin.status_code == 403
    finally:
        stop(proc)


def test_loopback_bind_has_no_warning(dirs: tuple[Path, Path]) -> None:
    agent, work = dirs
    proc, lines = _spawn(agent, work, "127.0.0.1:0")
    try:
        assert len(lines) == 1, lines
        assert "serving MCP at http://127.0.0.1:" in lines[0]
    finally:
        stop(proc)


def test_ipv6_wildcard_bind_serves_this_machines_ipv6_addresses(
    dirs: tuple[Path, Path],
) -> None:
    addresses = own_global_ipv6_addresses()
    if not addresses:
        pytest.skip("this machine has no global IPv6 address")
    agent, work = dirs
    proc, lines = _spawn(agent, work, "[::]:0")
    try:
        assert lines, "pct serve printed nothing"
        assert "serving MCP at http://[::]:" in lines[-1], lines
        port = int(lines[-1].split("http://[::]:", 1)[1].split("/", 1)[0])
        assert f"pct: warning: serving on [::]:{port}, which is not loopback" in "".join(lines)
        token = (agent / "pct" / "token").read_text().strip()
        auth = {**HEADERS, "Authorization": f"Bearer {token}"}
        with httpx.Client(timeout=30) as http:
            for address in addresses:
                served = http.post(f"http://[{address}]:{port}/mcp", json=INIT, headers=auth)
                assert served.status_code == 200, (address, served.status_code, served.text)
    finally:
        stop(proc)
