"""DNS-rebinding protection for `/mcp`: the `Host` and `Origin` headers must name this server.

A page on another site can make a browser send requests to a local port, but the browser
then sends that site's name as `Host` (and its origin as `Origin`). So a request is served
only when the header names a loopback address, the address the server was asked to bind,
or — for a wildcard bind (`0.0.0.0`, `::`), which serves every local address — any address
of this machine or its host name. Whether an address is local is asked of the kernel at
request time (binding a socket to it succeeds only for a local address), so addresses that
appear later (DHCP, a VPN) are accepted as they come and no interface list is kept.

The answers match the MCP SDK's own check, which this replaces because the SDK only knows
fixed host lists: 421 `Invalid Host header`, 403 `Invalid Origin header`.
"""

from __future__ import annotations

import ipaddress
import socket
from urllib.parse import urlsplit

from starlette.datastructures import Headers
from starlette.responses import Response
from starlette.types import ASGIApp, Receive, Scope, Send

WILDCARD_HOSTS = ("0.0.0.0", "::")
_LOOPBACK_NAMES = frozenset({"localhost", "127.0.0.1", "::1"})


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def split_host(value: str) -> str | None:
    """`name[:port]` or `[v6][:port]` → the name (lower case), or None when malformed."""
    value = value.strip().lower()
    if value.startswith("["):
        end = value.find("]")
        if end < 0:
            return None
        name, rest = value[1:end], value[end + 1 :]
        if rest and not (rest.startswith(":") and rest[1:].isdigit()):
            return None
        return name
    name, colon, port = value.partition(":")
    if colon and not port.isdigit():
        return None  # also an unbracketed IPv6 literal, which a Host header never is
    return name or None


def is_local_address(name: str) -> bool:
    """`name` is an IP literal assigned to this machine (asked of the kernel by binding)."""
    try:
        address = ipaddress.ip_address(name)
    except ValueError:
        return False
    if address.is_unspecified or address.is_multicast:
        return False
    family = socket.AF_INET6 if address.version == 6 else socket.AF_INET
    try:
        with socket.socket(family, socket.SOCK_STREAM) as probe:
            probe.bind((str(address), 0))
    except OSError:
        return False
    return True


class HostCheck:
    """ASGI middleware: refuse requests whose `Host`/`Origin` name another site."""

    def __init__(self, app: ASGIApp, bound_host: str) -> None:
        self.app = app
        self.wildcard = bound_host in WILDCARD_HOSTS
        names = set(_LOOPBACK_NAMES)
        if self.wildcard:
            names.add(socket.gethostname().lower())
        else:
            names.add(bound_host.lower())
        self.names = frozenset(names)

    def allows(self, name: str) -> bool:
        if name in self.names or is_loopback(name):
            return True
        return self.wildcard and is_local_address(name)

    def host_ok(self, header: str | None) -> bool:
        name = split_host(header) if header else None
        return name is not None and self.allows(name)

    def origin_ok(self, header: str | None) -> bool:
        if not header:
            return True  # same-origin and non-browser requests carry none
        try:
            parts = urlsplit(header)
        except ValueError:
            return False
        if parts.scheme not in ("http", "https"):
            return False
        name = split_host(parts.netloc)
        return name is not None and self.allows(name)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            headers = Headers(scope=scope)
            if not self.host_ok(headers.get("host")):
                await Response("Invalid Host header", status_code=421)(scope, receive, send)
                return
            if not self.origin_ok(headers.get("origin")):
                await Response("Invalid Origin header", status_code=403)(scope, receive, send)
                return
        await self.app(scope, receive, send)
