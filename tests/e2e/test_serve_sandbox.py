"""`pct serve --sandbox MODE` confines shell jobs and Code Mode cells (Linux: Landlock, seccomp).

Every test drives a real `pct serve` over stdio. TMPDIR points into the test's own directory,
so the system temp dir (where pytest keeps tmp_path) is *outside* the writable roots and a write
there is a real escape attempt.
"""

from __future__ import annotations

import asyncio
import os
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from pct_procs import PCT, child_env, text_of, write_config

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.skipif(
        not sys.platform.startswith("linux"), reason="Landlock and seccomp exist only on Linux"
    ),
]


def _landlock_abi() -> int:
    from pct_runtime.host.system.sandbox.linux import landlock_abi

    return landlock_abi()


needs_landlock = pytest.mark.skipif(
    sys.platform.startswith("linux") and _landlock_abi() < 3,
    reason="this kernel has no Landlock ABI 3 (pct refuses --sandbox here; tested below)",
)


@pytest.fixture
def box(tmp_path: Path) -> dict[str, Path]:
    agent, work, temp, outside = (tmp_path / n for n in ("agent", "work", "temp", "outside"))
    for path in (agent, work, temp, outside):
        path.mkdir()
    write_config(
        agent,
        {
            "applyPatch": {"enabled": True},
            "shellSessions": {"enabled": True},
            "codeMode": {"enabled": True},
        },
    )
    return {"agent": agent, "work": work, "temp": temp, "outside": outside}


def params(box: dict[str, Path], *args: str) -> StdioServerParameters:
    return StdioServerParameters(
        command=PCT,
        args=["serve", *args],
        env={
            "PI_CODING_AGENT_DIR": str(box["agent"]),
            "TMPDIR": str(box["temp"]),
            # The MCP client passes only a minimal environment; keep the code under test.
            **{key: os.environ[key] for key in ("PYTHONPATH",) if key in os.environ},
        },
        cwd=box["work"],
    )


def _wait_for(path: Path, timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while not path.exists() and time.monotonic() < deadline:
        time.sleep(0.05)


async def run(client: Client, cmd: str) -> str:
    return text_of(await client.call_tool("exec_command", {"cmd": cmd, "yield_time_ms": 10000}))


@needs_landlock
async def test_workspace_write_confines_writes(box: dict[str, Path]) -> None:
    outside, work = box["outside"], box["work"]
    async with Client(params(box, "--sandbox", "workspace-write"), mode="legacy") as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
        described = tools["exec_command"].description or ""
        assert "kernel sandbox (workspace-write)" in described
        assert str(work) in described
        denied = await run(client, f"echo x > {outside}/escape.txt")
        assert "Read-only file system" in denied
        assert "Command denied by sandbox: a kernel sandbox (workspace-write)" in denied
        allowed = await run(client, f"echo ok > {work}/inside.txt && echo t > $TMPDIR/t.txt")
        assert "exit_code: 0" in allowed
        # A grandchild in a new session (setsid -f: forked, not waited for) stays confined.
        await run(
            client,
            f"setsid -f sh -c 'echo x > {outside}/grandchild.txt; echo $? > {work}/gc.status'",
        )
        await asyncio.to_thread(_wait_for, work / "gc.status")
        assert (work / "gc.status").read_text().strip() != "0"
    assert not (outside / "escape.txt").exists()
    assert not (outside / "grandchild.txt").exists()
    assert (work / "inside.txt").read_text() == "ok\n"
    assert (box["temp"] / "t.txt").exists()


@needs_landlock
async def test_read_only_refuses_every_write_and_apply_patch(box: dict[str, Path]) -> None:
    outside, work = box["outside"], box["work"]
    async with Client(params(box, "--sandbox", "read-only"), mode="legacy") as client:
        inside = await run(client, f"echo x > {work}/inside.txt")
        assert "Command denied by sandbox: a kernel sandbox (read-only)" in inside
        await run(client, f"echo x > {outside}/escape.txt")
        reading = await run(client, "cat /etc/hostname > /dev/null && echo readable")
        assert "readable" in reading
        cell = await client.call_tool("exec", {"code": "print(6 * 7)"})
        assert "42" in "".join(getattr(block, "text", "") for block in cell.content)
        patch = "*** Begin Patch\n*** Add File: p.txt\n+hi\n*** End Patch"
        refused = await client.call_tool("apply_patch", {"patch": patch})
        assert refused.is_error
        assert "read-only" in text_of(refused)
    assert not (work / "inside.txt").exists()
    assert not (outside / "escape.txt").exists()
    assert not (work / "p.txt").exists()


@pytest.fixture
def listener() -> Iterator[int]:
    """A TCP listener on 127.0.0.1 that accepts and closes connections (the fake peer)."""
    server = socket.create_server(("127.0.0.1", 0))
    server.settimeout(0.2)
    stop = threading.Event()

    def serve() -> None:
        while not stop.is_set():
            try:
                conn, _ = server.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            conn.close()

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield server.getsockname()[1]
    finally:
        stop.set()
        thread.join(5)
        server.close()


def _connect_cmd(port: int) -> str:
    code = f"import socket; socket.create_connection(('127.0.0.1', {port}), 5); print('connected')"
    return f'{sys.executable} -c "{code}"'


@needs_landlock
async def test_network_is_off_unless_sandbox_network(box: dict[str, Path], listener: int) -> None:
    async with Client(params(box, "--sandbox", "workspace-write"), mode="legacy") as client:
        blocked = await run(client, _connect_cmd(listener))
        assert "connected" not in blocked
        assert "Command denied by sandbox" in blocked
        assert "outbound network is blocked" in blocked
    flags = ("--sandbox", "workspace-write", "--sandbox-network")
    async with Client(params(box, *flags), mode="legacy") as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
        assert "outbound network is allowed" in (tools["exec_command"].description or "")
        allowed = await run(client, _connect_cmd(listener))
        assert "connected" in allowed, allowed


@needs_landlock
async def test_code_mode_cell_escaping_imports_cannot_write_outside(box: dict[str, Path]) -> None:
    outside = box["outside"]
    code = (
        "import random\n"
        "os = random._os\n"
        "try:\n"
        f"    os.open({str(outside / 'cell.txt')!r}, os.O_WRONLY | os.O_CREAT, 0o600)\n"
        "    print('wrote')\n"
        "except OSError as exc:\n"
        "    print('refused', exc.errno)\n"
    )
    async with Client(params(box, "--sandbox", "workspace-write"), mode="legacy") as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
        assert "kernel sandbox (workspace-write)" in (tools["exec"].description or "")
        result = await client.call_tool("exec", {"code": code})
        text = text_of(result) + "".join(getattr(b, "text", "") for b in result.content[1:])
        assert "refused 30" in text, text  # EROFS: the root is bound read-only
    assert not (outside / "cell.txt").exists()


def test_unsupported_kernel_refuses_to_start(box: dict[str, Path]) -> None:
    """A kernel without Landlock (simulated: seccomp makes its syscalls fail with ENOSYS)."""
    pytest.importorskip("seccompy")
    launcher = (
        "import errno, os, sys, seccompy\n"
        "f = seccompy.Filter()\n"
        "for nr in (444, 445, 446):\n"
        "    f.errno(nr, errno.ENOSYS)\n"
        "f.load()\n"
        "os.execv(sys.argv[1], sys.argv[1:])\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", launcher, PCT, "serve", "--sandbox", "workspace-write"],
        cwd=box["work"],
        env=child_env(box["agent"]),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert proc.returncode != 0
    assert "cannot start with --sandbox workspace-write" in proc.stderr
    assert "Landlock LSM is not available" in proc.stderr
    assert "--sandbox danger-full-access" in proc.stderr


@needs_landlock
async def test_the_config_key_sets_the_mode(box: dict[str, Path]) -> None:
    write_config(
        box["agent"],
        {"shellSessions": {"enabled": True}, "pct": {"sandbox": {"mode": "workspace-write"}}},
    )
    async with Client(params(box), mode="legacy") as client:
        denied = await run(client, f"echo x > {box['outside']}/escape.txt")
        assert "Command denied by sandbox: a kernel sandbox (workspace-write)" in denied
    async with Client(params(box, "--sandbox", "danger-full-access"), mode="legacy") as client:
        allowed = await run(client, f"echo x > {box['outside']}/flag-wins.txt")
        assert "exit_code: 0" in allowed
    assert not (box["outside"] / "escape.txt").exists()
    assert (box["outside"] / "flag-wins.txt").exists()


def test_a_bwrap_that_cannot_run_stops_pct_serve(box: dict[str, Path]) -> None:
    """No user namespaces (simulated by a failing `bwrap` first on PATH): pct refuses to start
    and says why and what to do, instead of running with Landlock and seccomp alone."""
    fake = box["temp"] / "bin" / "bwrap"
    fake.parent.mkdir()
    fake.write_text(
        "#!/bin/sh\necho 'bwrap: No permissions to create new namespace' >&2\nexit 1\n",
        encoding="utf-8",
    )
    fake.chmod(0o755)
    path = f"{fake.parent}{os.pathsep}{os.environ.get('PATH', '')}"
    proc = subprocess.run(
        [PCT, "serve", "--sandbox", "workspace-write"],
        cwd=box["work"],
        env=child_env(box["agent"], PATH=path),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert proc.returncode == 1
    assert "cannot start with --sandbox workspace-write" in proc.stderr
    assert "No permissions to create new namespace" in proc.stderr
    assert "user.max_user_namespaces" in proc.stderr
    assert "--sandbox danger-full-access" in proc.stderr


def test_an_invalid_config_value_stops_pct_serve(box: dict[str, Path]) -> None:
    write_config(box["agent"], {"pct": {"sandbox": {"mode": "yes"}}})
    proc = subprocess.run(
        [PCT, "serve"],
        cwd=box["work"],
        env=child_env(box["agent"]),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert proc.returncode == 1
    assert "pct.sandbox.mode must be one of read-only, workspace-write" in proc.stderr
