"""`"debug": true` reaches the runtime's OpenAI tools: one JSON metadata line per request on
the runtime's debug stream and on `pct.debug`, never a secret; off (or a None stream) writes
nothing. Requests go to a fake HTTP server on 127.0.0.1 (the executors' client is pointed at
it; path, headers and body are unchanged)."""

from __future__ import annotations

import io
import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx
import pytest

from pct_runtime.capabilities.base import ToolError
from pct_runtime.capabilities.openai import http as openai_http
from pct_runtime.debug import DEBUG_CHANNEL
from pct_runtime.runtime import Runtime

KEY = "sk-CANARY-KEY-0123456789"
PROMPT = "PROMPT-CANARY"
BODY = "BODY-CANARY"


class _Loopback(httpx.AsyncBaseTransport):
    """Carries each request to the fake server (scheme/host/port rewritten only)."""

    def __init__(self, port: int) -> None:
        self._inner = httpx.AsyncHTTPTransport(retries=0)
        self._port = port
        self.hosts: list[str] = []

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        self.hosts.append(request.url.host)
        request.url = request.url.copy_with(scheme="http", host="127.0.0.1", port=self._port)
        return await self._inner.handle_async_request(request)

    async def aclose(self) -> None:
        await self._inner.aclose()


@pytest.fixture
def fake_openai(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[bytes]]:
    """A 127.0.0.1 server answering every request 400 with a body holding a canary."""
    seen: list[bytes] = []

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:
            return None

        def do_POST(self) -> None:
            length = int(self.headers.get("content-length") or 0)
            seen.append(bytes(str(self.headers), "latin-1") + self.rfile.read(length))
            body = json.dumps({"error": {"message": BODY}}).encode()
            self.send_response(400)
            self.send_header("content-type", "application/json")
            self.send_header("x-request-id", "req_debug_1")
            self.send_header("content-length", str(len(body)))
            self.send_header("connection", "close")
            self.end_headers()
            self.wfile.write(body)

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.02})
    thread.start()
    port = int(server.server_address[1])
    real_open = openai_http.open_client

    def open_client(transport: httpx.AsyncBaseTransport | None) -> httpx.AsyncClient:
        return real_open(transport if transport is not None else _Loopback(port))

    from pct_runtime.capabilities.image import generate
    from pct_runtime.capabilities.web_search import sidecar

    monkeypatch.setattr(generate, "open_client", open_client)
    monkeypatch.setattr(sidecar, "open_client", open_client)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    try:
        yield seen
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


def agent_dir(tmp_path: Path, debug: bool) -> Path:
    agent = tmp_path / "agent"
    (agent / "extensions").mkdir(parents=True)
    config = {
        "debug": debug,
        "imageGeneration": {"enabled": True},
        "webSearch": {
            "enabled": True,
            "backend": "sidecar",
            "sidecarModel": {"provider": "openai", "model": "gpt-5"},
        },
    }
    (agent / "extensions" / "pi-codex-toolkit.json").write_text(json.dumps(config), "utf-8")
    (agent / "auth.json").write_text(json.dumps({"openai": {"type": "api_key", "key": KEY}}))
    return agent


async def call_both(runtime: Runtime) -> None:
    session = await runtime.open_session("mcp")
    for name, args in (
        ("openai_generate_image", {"prompt": PROMPT}),
        ("openai_web_search", {"query": PROMPT}),
    ):
        with pytest.raises(ToolError):
            await session.call(name, args)


async def test_debug_on_writes_one_metadata_line_per_request_and_no_secret(
    tmp_path: Path, fake_openai: list[bytes]
) -> None:
    out = io.StringIO()
    published: list[Any] = []
    async with Runtime(
        agent_dir=agent_dir(tmp_path, True), model="openai/gpt-5", debug_stream=out
    ) as runtime:
        runtime.events.subscribe(DEBUG_CHANNEL, published.append)
        await call_both(runtime)
    assert len(fake_openai) == 2
    assert KEY.encode() in fake_openai[0]  # really sent
    assert PROMPT.encode() in fake_openai[0]
    lines = [json.loads(line) for line in out.getvalue().splitlines()]
    assert lines == published
    assert [line["feature"] for line in lines] == ["image-generation", "web-search-sidecar"]
    for line in lines:
        assert line["status"] == 400
        assert line["requestId"] == "req_debug_1"
        assert line["endpointHost"] == "api.openai.com"
    text = out.getvalue()
    for secret in (KEY, PROMPT, BODY, "Bearer"):
        assert secret not in text


async def test_debug_off_writes_nothing(tmp_path: Path, fake_openai: list[bytes]) -> None:
    out = io.StringIO()
    published: list[Any] = []
    async with Runtime(
        agent_dir=agent_dir(tmp_path, False), model="openai/gpt-5", debug_stream=out
    ) as runtime:
        runtime.events.subscribe(DEBUG_CHANNEL, published.append)
        await call_both(runtime)
    assert len(fake_openai) == 2
    assert out.getvalue() == ""
    assert published == []


async def test_a_none_debug_stream_publishes_on_the_bus_only(
    tmp_path: Path, fake_openai: list[bytes], capsys: pytest.CaptureFixture[str]
) -> None:
    published: list[Any] = []
    async with Runtime(
        agent_dir=agent_dir(tmp_path, True), model="openai/gpt-5", debug_stream=None
    ) as runtime:
        runtime.events.subscribe(DEBUG_CHANNEL, published.append)
        await call_both(runtime)
    assert [record["feature"] for record in published] == ["image-generation", "web-search-sidecar"]
    captured = capsys.readouterr()
    assert captured.err == ""
    assert captured.out == ""


async def test_the_default_stream_is_stderr(
    tmp_path: Path, fake_openai: list[bytes], capsys: pytest.CaptureFixture[str]
) -> None:
    async with Runtime(agent_dir=agent_dir(tmp_path, True), model="openai/gpt-5") as runtime:
        await call_both(runtime)
    features = [json.loads(line)["feature"] for line in capsys.readouterr().err.splitlines()]
    assert features == ["image-generation", "web-search-sidecar"]


async def test_compaction_and_computer_use_get_the_runtime_sink(tmp_path: Path) -> None:
    from pct_runtime.capabilities.openai.factory import session_compaction

    async with Runtime(agent_dir=agent_dir(tmp_path, True), model="openai/gpt-5") as runtime:
        session = await runtime.open_session("embedded")
        assert session.context.debug is runtime.debug
        assert session_compaction(session.context)._debug is runtime.debug
