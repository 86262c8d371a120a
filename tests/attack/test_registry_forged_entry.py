"""A registry entry is trusted with the control token only on loopback, and only when the
pid it names holds the listening socket.

`pct reload`, `pct status --live` and the console's discovery send the token to every
registered runtime. An entry naming a port some other process listens on (a forged
entry, or a port taken over after the runtime died) or a host that is not loopback is
skipped, reported once, and never contacted.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import socket
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

from pct_runtime.jsontypes import JSONMapping
from pct_runtime.serve.client.running import control_token
from pct_runtime.serve.live.control import ControlServer
from pct_tui.remote import RegistryBackend
from tests.e2e.pct_procs import PCT, child_env

linux_only = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="sock_diag")


def _non_loopback_ip() -> str:
    """An address of this machine that is not loopback (a UDP connect sends nothing)."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        try:
            probe.connect(("192.0.2.1", 9))
            address = str(probe.getsockname()[0])
        except OSError:
            address = ""
    return address if address and not address.startswith("127.") else "0.0.0.0"


class Trap:
    """A listener this test owns that records every byte anyone sends it."""

    def __init__(self, host: str) -> None:
        self.received: list[bytes] = []
        self.host = host
        self.server: asyncio.Server | None = None

    async def start(self) -> int:
        async def take(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            with contextlib.suppress(Exception):
                self.received.append(await asyncio.wait_for(reader.read(65536), 5))
            writer.close()

        bind = "0.0.0.0" if self.host == "0.0.0.0" else self.host
        self.server = await asyncio.start_server(take, bind, 0)
        return int(self.server.sockets[0].getsockname()[1])

    async def aclose(self) -> None:
        if self.server is not None:
            self.server.close()
            await self.server.wait_closed()


@pytest.fixture
def other_pid() -> Iterator[int]:
    """A live process of this user that is not the one listening."""
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"])
    try:
        yield child.pid
    finally:
        child.kill()
        child.wait()


def _forge(agent: Path, name: str, pid: int, control: str) -> Path:
    directory = agent / "pct" / "runtimes"
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / f"{pid}-{name}.json"
    entry = {
        "pid": pid,
        "kind": "pct serve",
        "control": control,
        "mcp": "stdio",
        "started": time.time() + 1,  # after the pid's start: not a reused-pid entry
        "transport": "stdio",
        "live": 1,
    }
    path.write_text(json.dumps(entry))
    return path


@pytest.fixture
async def registry(
    tmp_path: Path, other_pid: int
) -> AsyncIterator[tuple[Path, list[Trap], list[Path], list[str]]]:
    """The agent dir with one real runtime (this process's control server) and two forged
    entries: a port this test listens on, named as another pid's; and a host that is not
    loopback, whose listener this process does own."""
    agent = tmp_path / "agent"
    (agent / "extensions").mkdir(parents=True)
    (agent / "extensions" / "pi-codex-toolkit.json").write_text("{}")
    asked: list[str] = []

    async def handler(op: str) -> JSONMapping:
        asked.append(op)
        if op == "status":
            return {"ok": True, "text": "the real runtime"}
        return {"ok": True, "message": "reloaded for real"}

    server = ControlServer(agent, control_token(agent), handler, kind="pct serve", mcp="stdio")
    await server.start()
    not_its_pid = Trap("127.0.0.1")
    remote = Trap(_non_loopback_ip())
    traps = [not_its_pid, remote]
    try:
        port = await not_its_pid.start()
        forged = [_forge(agent, "forged", other_pid, f"127.0.0.1:{port}")]
        port = await remote.start()
        forged.append(_forge(agent, "remote", os.getpid(), f"{remote.host}:{port}"))
        yield agent, traps, forged, asked
    finally:
        await server.aclose()
        for trap in traps:
            await trap.aclose()


async def _pct(agent: Path, *args: str) -> tuple[int, str, str]:
    proc = await asyncio.create_subprocess_exec(
        PCT,
        *args,
        env=child_env(agent),
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    out, err = await asyncio.wait_for(proc.communicate(), 60)
    return proc.returncode or 0, out.decode(), err.decode()


@linux_only
async def test_forged_entries_get_no_token_from_reload_or_status(
    registry: tuple[Path, list[Trap], list[Path], list[str]],
) -> None:
    agent, traps, forged, asked = registry
    code, out, err = await _pct(agent, "reload")
    assert code == 0, err
    assert "reloaded for real" in out  # the real runtime still gets it
    forged_name, remote_name = (p.name for p in forged)
    assert err.count("skipped registry entry") == 2, err
    assert f"pct: skipped registry entry {forged_name}: 127.0.0.1:" in err
    assert f"is not held by pid {forged_name.split('-')[0]}; no token was sent to it" in err
    assert f"pct: skipped registry entry {remote_name}: control address " in err
    assert "is not on loopback (127.0.0.0/8 or ::1)" in err

    code, out, err = await _pct(agent, "status", "--live")
    assert code == 0, err
    assert "the real runtime" in out
    assert err.count("skipped registry entry") == 2, err

    await asyncio.sleep(0.2)
    assert asked == ["reload", "status"]
    for trap in traps:
        assert trap.received == []  # not a byte, let alone the token
    assert all(path.exists() for path in forged)  # not ours to delete


@linux_only
async def test_the_consoles_discovery_skips_forged_entries(
    registry: tuple[Path, list[Trap], list[Path], list[str]],
    caplog: pytest.LogCaptureFixture,
) -> None:
    agent, traps, forged, _ = registry
    caplog.set_level(logging.WARNING, logger="pct_runtime.serve.live.control")
    seen: list[tuple[str, int]] = []

    async def watch() -> None:
        async for change, entry in RegistryBackend(agent).watch(None):
            seen.append((change, entry.pid))

    watcher = asyncio.ensure_future(watch())
    try:
        for _ in range(200):
            if seen:
                break
            await asyncio.sleep(0.05)
        await asyncio.sleep(1.2)  # a few more scans: still reported only once
    finally:
        watcher.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await watcher
    assert seen == [("added", os.getpid())]
    skipped = [r.getMessage() for r in caplog.records if "skipped registry entry" in r.message]
    assert sorted(m.split(":")[0] for m in skipped) == sorted(
        f"skipped registry entry {p.name}" for p in forged
    )
    for trap in traps:
        assert trap.received == []
