"""Live control of running runtimes: a registry under the agent dir plus a loopback channel.

Every running runtime (a `pct serve` or the console) listens on `127.0.0.1:<port>` for
one-line JSON requests authenticated with the pct token, and registers itself as
`<agent dir>/pct/runtimes/<pid>-<id>.json` (pid, kind, control and MCP endpoints). The
entry is removed on exit; entries whose process is gone are ignored (and swept), and one
whose address is not loopback or whose port is not held by its pid is never sent the token.

Requests: `{"token", "op": "reload" | "status" | "ping"}` → `{"ok": bool, ...}`, one line
each way; the server then ends the stream, so a reply of any size is read to its end. Every
request gets an answer: a malformed one `{"ok": false, "error": "malformed request: ..."}`.
A token-checked `subscribe` (live control, docs/LIVE_PROTOCOL.md) hands the connection to
the runtime's stream handler instead, which keeps it open.
"""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress
import json
import logging
import os
import time
import uuid
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

from pct_runtime.host.system.peers import (
    NOTHING_LISTENS,
    REFUSED,
    listener_inode,
    listener_owned_by,
    quick_sandboxed_peer,
    sandboxed_peer,
)
from pct_runtime.host.system.procs import alive_since
from pct_runtime.jsontypes import JSONMapping
from pct_runtime.pids import pid_alive
from pct_runtime.serve.live.dead_runtimes import sweep_stale_state
from pct_runtime.serve.token import state_dir, token_matches

_log = logging.getLogger(__name__)

_MAX_LINE = 64 * 1024
#: Connections that have not yet sent a token-checked request. Any local user can connect;
#: each waits up to 10 s for its line, so without a bound a few hundred idle sockets use up
#: the runtime's file descriptors (a 1024 limit is common) and it can no longer accept MCP
#: requests or start a shell. Past the bound a connection is told so and closed at once.
MAX_UNANSWERED = 64
BUSY = "busy: too many control connections are waiting; try again"
#: Largest reply a client accepts: a status of thousands of sessions is a few MB.
MAX_REPLY = 64 * 1024 * 1024
OPS = ("reload", "status", "ping")
Handler = Callable[[str], Awaitable[JSONMapping]]
#: `await stream(request, reader, writer)`: serves a `subscribe` connection to its end.
StreamHandler = Callable[
    [Mapping[str, object], asyncio.StreamReader, asyncio.StreamWriter], Awaitable[None]
]
SUBSCRIBE = "subscribe"


def runtime_registry_dir(agent_dir: Path) -> Path:
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
    #: `stdio` | `http` (entries written before it was recorded: derived from `mcp`).
    transport: str = ""
    #: The live-control protocol version it speaks (0: none, an older runtime).
    live: int = 0

    @property
    def label(self) -> str:
        return f"{self.kind} (pid {self.pid}, {self.mcp})"


def forget(entry: RuntimeEntry) -> None:
    """Remove a registry entry whose runtime is gone (never raises)."""
    with contextlib.suppress(OSError):
        entry.path.unlink()


def list_runtimes(
    agent_dir: Path, report: Callable[[str], None] | None = None
) -> list[RuntimeEntry]:
    """Registered runtimes whose process still exists (dead entries are removed) and that
    may be sent the token (`entry_problem`). An entry that may not is skipped, and
    `report(text)` (default: a logged warning) hears of it once per process."""
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
                transport=str(raw.get("transport") or transport_of(str(raw.get("mcp", "")))),
                live=int(raw.get("live", 0)),
            )
        except (OSError, ValueError, KeyError, TypeError):
            continue
        # A pid alive but started after the entry was written is another process (the
        # runtime died and its pid was reused, e.g. across a reboot): whoever listens on
        # that port now must never be sent the token.
        if not pid_alive(entry.pid) or not alive_since(entry.pid, entry.started):
            with contextlib.suppress(OSError):
                path.unlink()
            continue
        problem = entry_problem(entry)
        if problem is not None and problem.startswith(NOTHING_LISTENS):
            # A runtime listens before it registers and unregisters before it stops
            # listening: nothing listening means it died without cleanup.
            forget(entry)
            continue
        if problem is not None:
            text = f"skipped registry entry {path.name}: {problem}; no token was sent to it"
            if (path, problem) not in _reported:
                _reported.add((path, problem))
                (report or _log.warning)(text)
            continue
        entries.append(entry)
    return entries


#: Skipped entries already reported by this process, with why.
_reported: set[tuple[Path, str]] = set()
#: Entries whose listener was found held by their pid: (entry path, pid, control) → the
#: listening socket's inode, so a console's scan every half second reads no fd table.
_trusted: dict[tuple[Path, int, str], int] = {}


def entry_problem(entry: RuntimeEntry) -> str | None:
    """Why the token must not go to `entry`, or None. Its control address must be a
    loopback IP (127.0.0.0/8, ::1: a name could resolve anywhere) and its listening socket
    held by the pid the entry names, so neither a forged entry nor a port another process
    took over after the runtime died gets the token."""
    host, _, port_text = entry.control.rpartition(":")
    host = host.removeprefix("[").removesuffix("]")
    try:
        addr = ipaddress.ip_address(host)
        port = int(port_text)
    except ValueError:
        return f"control address {entry.control!r} is not an IP address and port"
    if not addr.is_loopback:
        return f"control address {entry.control} is not on loopback (127.0.0.0/8 or ::1)"
    if not 0 < port < 65536:
        return f"control address {entry.control} has no valid port"
    key = (entry.path, entry.pid, entry.control)
    inode = listener_inode(host, port)
    if inode is not None and _trusted.get(key) == inode:
        return None
    problem = listener_owned_by(host, port, entry.pid)
    if problem is None and inode is not None:
        _trusted[key] = inode
    return problem


def transport_of(mcp: str) -> str:
    """`stdio` or `http`, from a runtime's `mcp` address (`stdio` or its URL)."""
    return "stdio" if mcp == "stdio" else "http"


class ControlServer:
    """The loopback control listener of one runtime, and its registry entry."""

    def __init__(
        self,
        agent_dir: Path,
        token: str,
        handler: Handler,
        *,
        kind: str,
        mcp: str,
        stream: StreamHandler | None = None,
        live: int = 0,
    ) -> None:
        self.agent_dir = agent_dir
        self.token = token
        self.handler = handler
        self.kind = kind
        self.mcp = mcp
        self.stream = stream
        self.live = live if stream is not None else 0
        self._server: asyncio.Server | None = None
        self.entry_path: Path | None = None
        self.address = ""
        self._unanswered = 0

    async def start(self) -> None:
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", 0, limit=_MAX_LINE)
        host, port = self._server.sockets[0].getsockname()[:2]
        self.address = f"{host}:{port}"
        await asyncio.to_thread(sweep_stale_state, self.agent_dir)  # dead runtimes' leftovers
        directory = runtime_registry_dir(self.agent_dir)
        path = directory / f"{os.getpid()}-{uuid.uuid4().hex[:8]}.json"
        record = {
            "pid": os.getpid(),
            "kind": self.kind,
            "control": self.address,
            "mcp": self.mcp,
            "started": time.time(),
            "transport": transport_of(self.mcp),
            "live": self.live,
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
        raw["transport"] = transport_of(mcp)
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
        if self._unanswered >= MAX_UNANSWERED:
            writer.write(json.dumps({"ok": False, "error": BUSY}).encode("utf-8") + b"\n")
            writer.close()  # flushes the line; nothing of theirs is read
            return
        try:
            self._unanswered += 1
            try:
                # Before a byte is read: a sandboxed job may not control pct. A client
                # reconnecting from the last connection's process is judged at once.
                peer, local = writer.get_extra_info("peername"), writer.get_extra_info("sockname")
                refused = quick_sandboxed_peer(peer, local)
                if refused is None:
                    refused = await asyncio.to_thread(sandboxed_peer, peer, local)
                reply = {"ok": False, "error": REFUSED} if refused else await self._answer(reader)
            except Exception as exc:  # every request gets an answer line, whatever it held
                _log.exception("control request failed")
                reply = {"ok": False, "error": f"internal error: {type(exc).__name__}"}
            finally:
                self._unanswered -= 1
            if isinstance(reply, _Subscribe) and self.stream is not None:
                await self.stream(reply.request, reader, writer)
                return
            assert not isinstance(reply, _Subscribe)
            writer.write(json.dumps(reply).encode("utf-8") + b"\n")
            await writer.drain()
            # Closing with unread input (the rest of an oversized line) would reset the
            # connection and could destroy the reply: end our side, then let the client
            # finish (bounded) before closing.
            if writer.can_write_eof():
                writer.write_eof()
            with contextlib.suppress(TimeoutError, ValueError):
                await asyncio.wait_for(_discard(reader), 2.0)
        except (ConnectionError, OSError):
            pass
        except asyncio.CancelledError:
            # The runtime is shutting down. Nobody awaits this task, and asyncio's stream
            # callback would log a traceback for each connection still open.
            pass
        finally:
            writer.close()
            with contextlib.suppress(Exception):
                await writer.wait_closed()

    async def _answer(self, reader: asyncio.StreamReader) -> JSONMapping | _Subscribe:
        try:
            line = await asyncio.wait_for(reader.readline(), 10.0)
        except TimeoutError:
            return _malformed("no request line within 10 seconds")
        except ValueError:  # the stream's limit: a line longer than _MAX_LINE
            return _malformed(f"request line longer than {_MAX_LINE} bytes")
        problem, request = parse_request(line)
        if problem is not None:
            return _malformed(problem)
        if not token_matches(self.token, request["token"]):
            return {"ok": False, "error": "unauthorized"}
        op = request["op"]
        if op == SUBSCRIBE and self.stream is not None:
            return _Subscribe(json.loads(line))
        if op not in OPS:
            ops = (*OPS, SUBSCRIBE) if self.stream is not None else OPS
            return {"ok": False, "error": f"unknown op {op!r}; expected one of: {', '.join(ops)}"}
        try:
            return await self.handler(op)
        except Exception as exc:
            _log.exception("control request failed")
            return {"ok": False, "error": f"{type(exc).__name__}: {exc}"}


@dataclass(frozen=True)
class _Subscribe:
    """A token-checked `subscribe` request: the stream handler takes the connection."""

    request: Mapping[str, object]


async def _discard(reader: asyncio.StreamReader) -> None:
    while await reader.read(1 << 16):
        pass


def _malformed(problem: str) -> JSONMapping:
    return {"ok": False, "error": f"malformed request: {problem}"}


def parse_request(line: bytes) -> tuple[str | None, dict[str, str]]:
    """`(problem, request)`: the problem is None for a JSON object whose `token` and `op`
    are strings, which is all the rest of the server relies on."""
    if not line.strip():
        return "empty request line", {}
    try:
        request = json.loads(line)
    except (ValueError, RecursionError):
        return "not JSON", {}
    if not isinstance(request, dict):
        return "expected a JSON object", {}
    for key in ("token", "op"):
        if not isinstance(request.get(key), str):
            return f"{key} must be a string", {}
    return None, {"token": request["token"], "op": request["op"]}


async def request(entry: RuntimeEntry, token: str, op: str, wait: float = 10.0) -> JSONMapping:
    """Send one control request; raises OSError/TimeoutError/ValueError on failure."""
    host, _, port = entry.control.rpartition(":")
    reader, writer = await asyncio.wait_for(asyncio.open_connection(host, int(port)), wait)
    try:
        writer.write(json.dumps({"token": token, "op": op}).encode("utf-8") + b"\n")
        await writer.drain()
        data = await asyncio.wait_for(_read_reply(reader), wait)
    finally:
        writer.close()
        with contextlib.suppress(Exception):
            await writer.wait_closed()
    reply = json.loads(data)
    if not isinstance(reply, dict):
        raise ValueError("malformed control reply")
    return reply


async def _read_reply(reader: asyncio.StreamReader) -> bytes:
    """The reply is one line and then end of stream: read to the end rather than with a
    line reader, whose 64 KiB limit a status of ~40 sessions already exceeds."""
    chunks: list[bytes] = []
    size = 0
    while chunk := await reader.read(1 << 16):
        size += len(chunk)
        if size > MAX_REPLY:
            raise ValueError(f"control reply longer than {MAX_REPLY} bytes")
        chunks.append(chunk)
    return b"".join(chunks)
