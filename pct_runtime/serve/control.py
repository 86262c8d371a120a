"""Live control of running runtimes: a registry under the agent dir plus a loopback channel.

Every running runtime (a `pct serve` or the console) listens on `127.0.0.1:<port>` for
one-line JSON requests authenticated with the pct token, and registers itself as
`<agent dir>/pct/runtimes/<pid>-<id>.json` (pid, kind, control and MCP endpoints). The
entry is removed on exit; entries whose process is gone are ignored (and swept).

Requests: `{"token", "op": "reload" | "status" | "ping"}` → `{"ok": bool, ...}`.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import time
import uuid
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pct_runtime.serve.sweep import sweep_stale_state
from pct_runtime.serve.token import state_dir, token_matches

_log = logging.getLogger(__name__)

_MAX_LINE = 64 * 1024
Handler = Callable[[str], Awaitable[Mapping[str, Any]]]


def registry_dir(agent_dir: Path) -> Path:
    path = state_dir(agent_dir) / "runtimes"
    path.mkdir(mode=0o700, exist_ok=True)
    return path


@dataclass(frozen=True)
class RuntimeEntry:
    """One registered runtime."""

    pid: int
    kind: str
    control: str
    mcp: str
    started: float
    path: Path

    @property
    def label(self) -> str:
        return f"{self.kind} (pid {self.pid}, {self.mcp})"


def _pid_alive(pid: int) -> bool:
    """The process exists and is not a zombie (a killed child its parent has not reaped
    yet still answers `kill(pid, 0)`, but it will never serve again)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:
        stat = Path(f"/proc/{pid}/stat").read_text(encoding="ascii", errors="replace")
    except OSError:
        return True  # no procfs (macOS): kill(pid, 0) is all there is
    # `pid (comm) state ...`; comm may contain spaces or parentheses, so split at the last ')'.
    state = stat.rpartition(")")[2].split()[:1]
    return state != ["Z"]


def forget(entry: RuntimeEntry) -> None:
    """Remove a registry entry whose runtime is gone (never raises)."""
    with contextlib.suppress(OSError):
        entry.path.unlink()


def list_runtimes(agent_dir: Path) -> list[RuntimeEntry]:
    """Registered runtimes whose process still exists (dead entries are removed)."""
    directory = agent_dir / "pct" / "runtimes"
    if not directory.is_dir():
        return []
    entries: list[RuntimeEntry] = []
    for path in sorted(directory.glob("*.json")):
        try:
            raw = json.loads(path.read_text(encoding="utf-8"))
            entry = RuntimeEntry(
                pid=int(raw["pid"]),
                kind=str(raw["kind"]),
                control=str(raw["control"]),
                mcp=str(raw.get("mcp", "")),
                started=float(raw.get("started", 0.0)),
                path=path,
            )
        except (OSError, ValueError, KeyError, TypeError):
            continue
        if not _pid_alive(entry.pid):
            with contextlib.suppress(OSError):
                path.unlink()
            continue
        entries.append(entry)
    return entries


class ControlServer:
    """The loopback control listener of one runtime, and its registry entry."""

    def __init__(
        self, agent_dir: Path, token: str, handler: Handler, *, kind: str, mcp: str
    ) -> None:
        self.agent_dir = agent_dir
        self.token = token
        self.handler = handler
        self.kind = kind
        self.mcp = mcp
        self._server: asyncio.Server | None = None
        self.entry_path: Path | None = None
        self.address = ""

    async def start(self) -> None:
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", 0, limit=_MAX_LINE)
        host, port = self._server.sockets[0].getsockname()[:2]
        self.address = f"{host}:{port}"
        await asyncio.to_thread(sweep_stale_state, self.agent_dir)  # dead runtimes' leftovers
        directory = registry_dir(self.agent_dir)
        path = directory / f"{os.getpid()}-{uuid.uuid4().hex[:8]}.json"
        record = {
            "pid": os.getpid(),
            "kind": self.kind,
            "control": self.address,
            "mcp": self.mcp,
            "started": time.time(),
        }
        tmp = path.with_suffix(".tmp")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            json.dump(record, handle)
        os.replace(tmp, path)
        self.entry_path = path

    def set_mcp_endpoint(self, mcp: str) -> None:
        """Rewrite the registry entry once the MCP endpoint is known (HTTP binds later)."""
        self.mcp = mcp
        if self.entry_path is None:
            return
        raw = json.loads(self.entry_path.read_text(encoding="utf-8"))
        raw["mcp"] = mcp
        tmp = self.entry_path.with_suffix(".tmp")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            json.dump(raw, handle)
        os.replace(tmp, self.entry_path)

    async def aclose(self) -> None:
        if self.entry_path is not None:
            with contextlib.suppress(OSError):
                self.entry_path.unlink()
            self.entry_path = None
        if self._server is not None:
            self._server.close()
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self._server.wait_closed(), 2.0)
            self._server = None

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            try:
                line = await asyncio.wait_for(reader.readline(), 10.0)
                request = json.loads(line)
                if not isinstance(request, dict):
                    raise ValueError("request must be an object")
            except (ValueError, asyncio.LimitOverrunError, TimeoutError):
                reply: Mapping[str, Any] = {"ok": False, "error": "malformed request"}
            else:
                if not token_matches(self.token, request.get("token")):
                    reply = {"ok": False, "error": "unauthorized"}
                elif request.get("op") not in ("reload", "status", "ping"):
                    reply = {"ok": False, "error": "unknown op"}
                else:
                    try:
                        reply = await self.handler(str(request["op"]))
                    except Exception as exc:
                        _log.exception("control request failed")
                        reply = {"ok": False, "error": f"{type(exc).__name__}: {exc}"}
            writer.write(json.dumps(reply).encode("utf-8") + b"\n")
            await writer.drain()
        except (ConnectionError, OSError):
            pass
        finally:
            writer.close()
            with contextlib.suppress(Exception):
                await writer.wait_closed()


async def request(
    entry: RuntimeEntry, token: str, op: str, wait: float = 10.0
) -> Mapping[str, Any]:
    """Send one control request; raises OSError/TimeoutError/ValueError on failure."""
    host, _, port = entry.control.rpartition(":")
    reader, writer = await asyncio.wait_for(asyncio.open_connection(host, int(port)), wait)
    try:
        writer.write(json.dumps({"token": token, "op": op}).encode("utf-8") + b"\n")
        await writer.drain()
        line = await asyncio.wait_for(reader.readline(), wait)
    finally:
        writer.close()
        with contextlib.suppress(Exception):
            await writer.wait_closed()
    reply = json.loads(line)
    if not isinstance(reply, dict):
        raise ValueError("malformed control reply")
    return reply
