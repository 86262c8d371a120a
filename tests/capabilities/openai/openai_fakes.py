"""Local fake OpenAI/ChatGPT/auth servers for the OpenAI capability tests.

A real HTTP server on 127.0.0.1 (threaded `http.server`) that records every request and
answers with scripted replies: JSON bodies, close-delimited SSE streams written event by
event with flushes, redirects, or a reply that hangs until the test ends. The
`LoopbackTransport` carries a request built for an official URL to this server unchanged
(the Host header still names the official host), so production code never sees a test URL.
"""

from __future__ import annotations

import base64
import json
import threading
from collections import defaultdict, deque
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import httpx


@dataclass
class Reply:
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    chunks: list[bytes] = field(default_factory=list)
    hang: bool = False  # keep the connection open (after headers) until the server stops
    hang_before_headers: bool = False


@dataclass
class Recorded:
    method: str
    path: str
    headers: dict[str, str]
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body)


def json_reply(value: Any, status: int = 200, headers: dict[str, str] | None = None) -> Reply:
    return Reply(
        status=status,
        headers={"content-type": "application/json", **(headers or {})},
        chunks=[json.dumps(value).encode()],
    )


def sse_reply(*events: Any, status: int = 200, headers: dict[str, str] | None = None) -> Reply:
    chunks = []
    for event in events:
        if isinstance(event, bytes):
            chunks.append(event)
        else:
            chunks.append(
                f"event: {event.get('type', 'x')}\ndata: {json.dumps(event)}\n\n".encode()
            )
    return Reply(
        status=status,
        headers={"content-type": "text/event-stream", **(headers or {})},
        chunks=chunks,
    )


class FakeServer:
    def __init__(self) -> None:
        self.requests: list[Recorded] = []
        self._replies: dict[str, deque[Reply]] = defaultdict(deque)
        self.default: Reply | None = None
        self._release = threading.Event()
        self._lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.0"

            def log_message(self, format: str, *args: Any) -> None:
                return None

            def _handle(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                body = self.rfile.read(length) if length else b""
                record = Recorded(
                    self.command,
                    self.path,
                    {k.lower(): v for k, v in self.headers.items()},
                    body,
                )
                with server._lock:
                    server.requests.append(record)
                    queue = server._replies.get(self.path)
                    reply = queue.popleft() if queue else server.default
                if reply is None:
                    reply = Reply(status=404, chunks=[b"no reply scripted"])
                if reply.hang_before_headers:
                    server._release.wait(30)
                    return
                self.send_response(reply.status)
                for key, value in reply.headers.items():
                    self.send_header(key, value)
                self.send_header("connection", "close")
                self.end_headers()
                try:
                    for chunk in reply.chunks:
                        self.wfile.write(chunk)
                        self.wfile.flush()
                    if reply.hang:
                        server._release.wait(30)
                except (BrokenPipeError, ConnectionResetError):
                    pass

            do_POST = _handle
            do_GET = _handle

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )

    @property
    def port(self) -> int:
        return int(self._server.server_address[1])

    def script(self, path: str, *replies: Reply) -> None:
        with self._lock:
            self._replies[path].extend(replies)

    def start(self) -> FakeServer:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._release.set()
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(5)


class LoopbackTransport(httpx.AsyncBaseTransport):
    """Sends each request to the fake server, keeping path, headers and body unchanged."""

    def __init__(self, port: int) -> None:
        self.port = port
        self.urls: list[str] = []

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        self.urls.append(str(request.url))
        request.url = request.url.copy_with(scheme="http", host="127.0.0.1", port=self.port)
        inner = httpx.AsyncHTTPTransport(retries=0)
        response = await inner.handle_async_request(request)

        class _Stream(httpx.AsyncByteStream):
            async def __aiter__(self):  # type: ignore[no-untyped-def]
                async for chunk in response.stream:  # type: ignore[union-attr]
                    yield chunk

            async def aclose(self) -> None:
                await response.aclose()
                await inner.aclose()

        return httpx.Response(
            response.status_code,
            headers=response.headers,
            stream=_Stream(),
            extensions=response.extensions,
        )


def make_jwt(claims: dict[str, Any]) -> str:
    def enc(value: Any) -> str:
        raw = json.dumps(value).encode()
        return base64.urlsafe_b64encode(raw).decode().rstrip("=")

    return f"{enc({'alg': 'none', 'typ': 'JWT'})}.{enc(claims)}.c2lnbmF0dXJl"


def codex_token(account: str | None = "acct-123", extra: dict[str, Any] | None = None) -> str:
    claims: dict[str, Any] = {"exp": 4_000_000_000, **(extra or {})}
    if account is not None:
        claims["https://api.openai.com/auth"] = {"chatgpt_account_id": account}
    return make_jwt(claims)


import pytest  # noqa: E402


@pytest.fixture
def fake() -> Any:
    server = FakeServer().start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def loopback(fake: FakeServer) -> LoopbackTransport:
    return LoopbackTransport(fake.port)
