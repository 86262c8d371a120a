"""Helpers for end-to-end tests: a private agent dir, and `pct serve` processes that are reaped."""

from __future__ import annotations

import contextlib
import json
import os
import queue
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import httpx
import mcp_types as types

PCT = shutil.which("pct", path=str(Path(sys.executable).parent)) or "pct"
#: What every MCP HTTP request sends (add the bearer token).
HEADERS = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}
REPLY_TIMEOUT = 20.0


def initialize_request(client: str) -> dict[str, object]:
    return {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": client, "version": "1"},
        },
    }


def exec_request(cmd: str, request_id: int, yield_time_ms: int = 5000) -> dict[str, object]:
    args = {"cmd": cmd, "yield_time_ms": yield_time_ms}
    params = {"name": "exec_command", "arguments": args}
    return {"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": params}


async def open_mcp(http: httpx.AsyncClient, url: str, token: str, client: str) -> dict[str, str]:
    """Initialize an MCP session over HTTP; the headers of its further requests."""
    auth = {**HEADERS, "Authorization": f"Bearer {token}"}
    opened = await http.post(url, json=initialize_request(client), headers=auth)
    assert opened.status_code == 200, opened.text
    headers = {**auth, "Mcp-Session-Id": opened.headers["mcp-session-id"]}
    await http.post(url, json=INITIALIZED, headers=headers)
    return headers


def low_fd_limit() -> None:
    """`preexec_fn` of a flooded `pct serve`: 256 descriptors, so a flood reaches the limit."""
    _, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (256, hard))


def text_of(result: types.CallToolResult) -> str:
    """The text of a tool result's first content block."""
    block = result.content[0]
    assert isinstance(block, types.TextContent)
    return block.text


def write_config(agent_dir: Path, obj: Any) -> None:
    path = agent_dir / "extensions" / "pi-codex-toolkit.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(obj), encoding="utf-8")


def child_env(agent_dir: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "PCT_TOKEN"}
    env["PI_CODING_AGENT_DIR"] = str(agent_dir)
    env.update(extra)
    return env


@contextlib.contextmanager
def http_server(
    agent_dir: Path, cwd: Path, *args: str, listen: str = "127.0.0.1:0", **env: str
) -> Iterator[tuple[str, subprocess.Popen[str]]]:
    """Spawn `pct serve --http LISTEN`; yield (url, process); always reap it."""
    proc = subprocess.Popen(
        [PCT, "serve", "--http", listen, *args],
        cwd=cwd,
        env=child_env(agent_dir, **env),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        assert proc.stderr is not None
        deadline = time.monotonic() + 30
        url = ""
        while time.monotonic() < deadline:
            line = proc.stderr.readline()
            if not line:
                break
            if "serving MCP at " in line:
                url = line.split("serving MCP at ", 1)[1].split()[0]
                break
        if not url:
            raise RuntimeError(f"pct serve --http did not start (exit {proc.poll()})")
        yield url, proc
    finally:
        stop(proc)


def stop(proc: subprocess.Popen[Any]) -> None:
    if proc.poll() is None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(10)
    if proc.stderr is not None:
        proc.stderr.close()


class StdioServer:
    """`pct serve` over stdio, JSON-RPC lines read by a thread so every wait has a timeout."""

    def __init__(
        self,
        agent: Path,
        work: Path,
        *,
        prefix: Sequence[str] = (),
        args: Sequence[str] = (),
        **env: str,
    ) -> None:
        """`prefix` goes before the command (e.g. `setpriv` to serve as another user), `args`
        after `serve` (e.g. `--sandbox workspace-write`)."""
        self.proc = subprocess.Popen(
            [*prefix, PCT, "serve", *args],
            cwd=work,
            env=child_env(agent, **env),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
            start_new_session=True,
        )
        self._lines: queue.Queue[str] = queue.Queue()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()
        self._next = 0

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self._lines.put(line)

    def send(self, message: dict[str, Any]) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(message) + "\n")
        self.proc.stdin.flush()

    def request(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        self._next += 1
        self.send({"jsonrpc": "2.0", "id": self._next, "method": method, "params": params})
        deadline = time.monotonic() + REPLY_TIMEOUT
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise AssertionError(f"no reply to {method} within {REPLY_TIMEOUT} s")
            try:
                reply: dict[str, Any] = json.loads(self._lines.get(timeout=left))
            except queue.Empty:
                continue
            if reply.get("id") == self._next:
                return reply

    def initialize(self) -> None:
        info = {"name": "t", "version": "1"}
        params = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": info}
        self.request("initialize", params)
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def call(self, name: str, arguments: dict[str, Any]) -> str:
        reply = self.request("tools/call", {"name": name, "arguments": arguments})
        result = reply["result"]
        text: str = result["content"][0]["text"]
        return text


@contextlib.contextmanager
def serving(
    agent: Path, work: Path, *, prefix: Sequence[str] = (), **env: str
) -> Iterator[StdioServer]:
    server = StdioServer(agent, work, prefix=prefix, **env)
    try:
        server.initialize()
        yield server
    finally:
        stop(server.proc)


class RawStdio:
    """`pct serve` over stdio driven with raw bytes. A thread reads stdout lines, so every
    wait has a timeout; stderr goes to a file (`stderr_text()`). Use it as a context
    manager: the process is always reaped."""

    def __init__(self, agent_dir: Path, cwd: Path, *args: str) -> None:
        self._err = tempfile.TemporaryFile()  # noqa: SIM115 - closed by close()
        self.proc = subprocess.Popen(
            [PCT, "serve", *args],
            cwd=cwd,
            env=child_env(agent_dir),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._err,
            start_new_session=True,
        )
        self._lines: queue.Queue[bytes] = queue.Queue()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()
        self._next = 100

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self._lines.put(line)
        self._lines.put(b"")

    def __enter__(self) -> RawStdio:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()

    def close(self) -> None:
        if self.proc.stdin is not None:
            with contextlib.suppress(OSError):
                self.proc.stdin.close()
        stop(self.proc)
        if self.proc.stdout is not None:
            self.proc.stdout.close()
        self._err.close()

    def write(self, data: bytes) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(data)
        self.proc.stdin.flush()

    def send(self, message: object) -> None:
        self.write(json.dumps(message).encode() + b"\n")

    def line(self, timeout: float = 20.0) -> Any:
        """The next stdout line, parsed; b"" at end of output. Fails after `timeout`."""
        try:
            raw = self._lines.get(timeout=timeout)
        except queue.Empty:
            raise AssertionError(f"no line on stdout within {timeout} s") from None
        return json.loads(raw) if raw else raw

    def request(self, method: str, params: dict[str, Any] | None = None) -> Any:
        """Send a request; its answer (lines for other ids are skipped)."""
        self._next += 1
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": self._next, "method": method}
        if params is not None:
            message["params"] = params
        self.send(message)
        while True:
            reply = self.line()
            assert reply != b"", "stdout closed before the answer"
            if isinstance(reply, dict) and reply.get("id") == self._next:
                return reply

    def initialize(self) -> None:
        self.send(initialize_request("raw"))
        assert self.line()["id"] == 1
        self.send(INITIALIZED)

    def call(self, name: str, arguments: dict[str, Any]) -> tuple[str, dict[str, Any]]:
        """A tool call's text and details."""
        result = self.request("tools/call", {"name": name, "arguments": arguments})["result"]
        details: dict[str, Any] = result.get("_meta", {}).get("pct/details", {})
        return result["content"][0]["text"], details

    def stderr_text(self) -> str:
        self._err.seek(0)
        return self._err.read().decode("utf-8", "replace")


class LineServe:
    """A stdio `pct serve` spoken to in raw JSON-RPC lines (the caller owns the process)."""

    def __init__(self, proc: subprocess.Popen[str]) -> None:
        self.proc = proc
        self.next_id = 1

    def rpc(self, method: str, params: dict[str, object]) -> dict[str, object]:
        assert self.proc.stdin is not None
        assert self.proc.stdout is not None
        self.next_id += 1
        message = {"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params}
        self.proc.stdin.write(json.dumps(message) + "\n")
        self.proc.stdin.flush()
        while True:
            reply: dict[str, object] = json.loads(self.proc.stdout.readline())
            if reply.get("id") == self.next_id:
                return reply

    def call(self, name: str, arguments: dict[str, object]) -> dict[str, object]:
        """The `tools/call` result as the client gets it."""
        reply = self.rpc("tools/call", {"name": name, "arguments": arguments})
        result = reply["result"]
        assert isinstance(result, dict), reply
        return result

    def outcome(self, name: str, arguments: dict[str, object]) -> tuple[bool, str]:
        """`(isError, text)` of a `tools/call`."""
        result = self.call(name, arguments)
        content = result["content"]
        assert isinstance(content, list)
        text = "".join(c["text"] for c in content if c.get("type") == "text")
        return bool(result.get("isError")), text
