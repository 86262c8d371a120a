"""Streamable HTTP transport: `/mcp` on loopback, bearer token, Host/Origin checks.

`PctHttpServer` runs uvicorn inside the caller's event loop (the console runs it in a
worker; `pct serve --http` runs it as the whole process). The socket is bound before
serving so that port 0 works and the URL is known up front.
"""

from __future__ import annotations

import contextlib
import logging
import socket
from typing import Any

import uvicorn
from mcp.server.transport_security import TransportSecuritySettings
from starlette.datastructures import Headers
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Receive, Scope, Send

from pct_runtime.serve.mcp.hostcheck import WILDCARD_HOSTS, HostCheck, is_loopback
from pct_runtime.serve.mcp.http_idle import IdleBoundH11
from pct_runtime.serve.mcp.server import PctMCPServer
from pct_runtime.serve.token import TOKEN_ENV, token_matches

_log = logging.getLogger(__name__)

MCP_PATH = "/mcp"
DEFAULT_HOST = "127.0.0.1"
UNAUTHORIZED_MESSAGE = (
    f"Unauthorized: missing or wrong bearer token. Send 'Authorization: Bearer <token>' "
    f"with the token from {TOKEN_ENV} or the pct token file."
)


class BearerAuth:
    """ASGI middleware: every HTTP request needs `Authorization: Bearer <token>`."""

    def __init__(self, app: ASGIApp, token: str) -> None:
        self.app = app
        self.token = token

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        header = Headers(scope=scope).get("authorization", "")
        scheme, _, presented = header.partition(" ")
        if scheme.lower() != "bearer" or not token_matches(self.token, presented.strip()):
            response = JSONResponse(
                {
                    "jsonrpc": "2.0",
                    "id": None,
                    "error": {"code": -32001, "message": UNAUTHORIZED_MESSAGE},
                },
                status_code=401,
                headers={"WWW-Authenticate": 'Bearer realm="pct"'},
            )
            await response(scope, receive, send)
            return
        await self.app(scope, receive, send)


def parse_listen(text: str) -> tuple[str, int]:
    """`[HOST:]PORT` → (host, port); host defaults to loopback; `[::1]:PORT` for IPv6."""
    host, port_text = DEFAULT_HOST, text
    if text.startswith("["):
        end = text.find("]")
        if end < 0 or text[end + 1 : end + 2] != ":":
            raise ValueError(f"expected [HOST]:PORT, got {text!r}")
        host, port_text = text[1:end], text[end + 2 :]
    elif ":" in text:
        host, _, port_text = text.rpartition(":")
    try:
        port = int(port_text)
    except ValueError:
        raise ValueError(f"port must be a number, got {port_text!r}") from None
    if not 0 <= port <= 65535:
        raise ValueError(f"port must be 0-65535, got {port}")
    if not host:
        raise ValueError("host must not be empty")
    return host, port


#: The SDK's own Host/Origin check is off: `HostCheck` does it, with the same answers, and
#: also knows the addresses of a wildcard bind. Content-Type is still checked by the SDK.
_SDK_SECURITY = TransportSecuritySettings(enable_dns_rebinding_protection=False)


def exposure_warning(host: str, port: int) -> str | None:
    """The start-up warning of a bind that other machines can reach, else None."""
    if is_loopback(host):
        return None
    shown = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
    reach = "every address of this machine" if host in WILDCARD_HOSTS else host
    return (
        f"warning: serving on {shown}, which is not loopback: anyone who can reach {reach} "
        "and holds the token can run commands and change files as this user. Bind to "
        "127.0.0.1 unless other machines must attach."
    )


class _EmbeddedUvicorn(uvicorn.Server):
    """uvicorn that leaves signal handling to its host (the console owns shutdown)."""

    def __init__(self, config: uvicorn.Config, *, own_signals: bool) -> None:
        super().__init__(config)
        self._own_signals = own_signals

    def capture_signals(self) -> Any:
        if self._own_signals:
            return super().capture_signals()
        return contextlib.nullcontext()


class PctHttpServer:
    """Serve a `PctMCPServer` at `http://HOST:PORT/mcp` with bearer-token auth."""

    def __init__(
        self,
        mcp: PctMCPServer,
        *,
        token: str,
        host: str = DEFAULT_HOST,
        port: int = 0,
        own_signals: bool = False,
    ) -> None:
        self.mcp = mcp
        self.token = token
        self.host = host
        family = socket.AF_INET6 if ":" in host else socket.AF_INET
        self._sock = socket.socket(family, socket.SOCK_STREAM)
        self._sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._sock.bind((host, port))
        self._sock.listen(128)
        self._sock.setblocking(False)
        self.port: int = self._sock.getsockname()[1]
        app = mcp.server.streamable_http_app(
            streamable_http_path=MCP_PATH,
            host=host,
            transport_security=_SDK_SECURITY,
        )
        config = uvicorn.Config(
            BearerAuth(HostCheck(app, host), token),
            log_config=None,
            log_level="warning",
            lifespan="on",
            access_log=False,
            timeout_graceful_shutdown=3,
            http=IdleBoundH11,
        )
        self._uvicorn = _EmbeddedUvicorn(config, own_signals=own_signals)

    @property
    def url(self) -> str:
        shown = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{shown}:{self.port}{MCP_PATH}"

    @property
    def started(self) -> bool:
        return bool(self._uvicorn.started)

    async def serve(self) -> None:
        """Serve until `stop()` (or a signal when `own_signals`)."""
        try:
            await self._uvicorn.serve(sockets=[self._sock])
        finally:
            self._sock.close()

    def stop(self) -> None:
        self._uvicorn.should_exit = True
