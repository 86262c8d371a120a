"""uvicorn's HTTP/1.1 protocol with a bound on connections that have sent nothing.

uvicorn waits for a first request forever, before any token is checked, and the endpoint
is open to every local user: a few hundred idle sockets used up the runtime's file
descriptors (1024 is a common limit), after which it could accept no MCP request and
start no shell. Here a connection that sends nothing for uvicorn's keep-alive time is
closed, and one arriving while `MAX_SILENT` others are still silent is closed at once.

Before its first byte is read, a connection from a process inside a sandbox is answered 403
and closed (`host.system.peers`): a sandboxed job can read the token, and with this endpoint it
could run tools outside its sandbox. A client reconnecting from the process that held the
last connection is judged at once (`quick_sandboxed_peer`); any other check runs in a thread
and reading waits for it.
"""

from __future__ import annotations

import asyncio
import json

from uvicorn.protocols.http.h11_impl import H11Protocol

from pct_runtime.host.system.peers import REFUSED_DETAIL, quick_sandboxed_peer, sandboxed_peer

MAX_SILENT = 64
#: How long a refused connection's request is drained before it is closed.
_REFUSED_LINGER = 2.0
_REFUSED_BODY = json.dumps(
    {"jsonrpc": "2.0", "id": None, "error": {"code": -32001, "message": REFUSED_DETAIL}}
).encode("utf-8")
REFUSED_RESPONSE = (
    b"HTTP/1.1 403 Forbidden\r\ncontent-type: application/json\r\nconnection: close\r\n"
    + f"content-length: {len(_REFUSED_BODY)}\r\n\r\n".encode("ascii")
    + _REFUSED_BODY
)


class IdleBoundH11(H11Protocol):
    _silent = True
    _refused = False

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
        peer, local = transport.get_extra_info("peername"), transport.get_extra_info("sockname")
        try:
            quick = quick_sandboxed_peer(peer, local)  # a reconnecting client: no thread
        except Exception:
            quick = None
        if quick is not None:
            if quick:
                self._refuse()
            return
        transport.pause_reading()
        check = self.loop.run_in_executor(None, sandboxed_peer, peer, local)
        check.add_done_callback(self._peer_checked)

    def _peer_checked(self, check: asyncio.Future[bool]) -> None:
        if self.transport.is_closing():
            return
        if check.cancelled() or check.exception() is not None or check.result():
            self._refuse()  # an error in the check refuses too
        self.transport.resume_reading()

    def _refuse(self) -> None:
        # The request is read and dropped, so that closing with unread input does not reset
        # the connection before the 403 lands.
        self._refused = True
        if self.timeout_keep_alive_task is not None:
            self.timeout_keep_alive_task.cancel()
        self.transport.write(REFUSED_RESPONSE)
        self.loop.call_later(_REFUSED_LINGER, self.transport.close)

    def data_received(self, data: bytes) -> None:
        if self._refused:
            return
        self._silent = False
        super().data_received(data)
