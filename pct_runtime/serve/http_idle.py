"""uvicorn's HTTP/1.1 protocol with a bound on connections that have sent nothing.

uvicorn waits for a first request forever, before any token is checked, and the endpoint
is open to every local user: a few hundred idle sockets used up the runtime's file
descriptors (1024 is a common limit), after which it could accept no MCP request and
start no shell. Here a connection that sends nothing for uvicorn's keep-alive time is
closed, and one arriving while `MAX_SILENT` others are still silent is closed at once.
"""

from __future__ import annotations

import asyncio

from uvicorn.protocols.http.h11_impl import H11Protocol

MAX_SILENT = 64


class IdleBoundH11(H11Protocol):
    _silent = True

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        silent = sum(1 for c in self.connections if getattr(c, "_silent", False))
        super().connection_made(transport)
        if silent >= MAX_SILENT:
            transport.close()
            return
        # uvicorn's own keep-alive timer, armed before the first request as after a reply.
        self.timeout_keep_alive_task = self.loop.call_later(
            self.timeout_keep_alive, self.timeout_keep_alive_handler
        )

    def data_received(self, data: bytes) -> None:
        self._silent = False
        super().data_received(data)
