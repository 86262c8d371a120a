"""UI routing: the console when one is attached, else the session's own port, else none.

A capability asks `ctx.ui`; this proxy decides, at the moment of asking, who answers:
the attached console (modal screens, or a remote console over live control), otherwise
the fallback given for the session or the call (MCP elicitation when the client supports
it), otherwise `NoUI`, which fails before any change so the capability reports
`approval-unavailable`. A route that goes away mid-question (`UIRouteLostError`) hands the
question to the next one.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Awaitable, Callable, Sequence
from typing import TypeVar

from pct_runtime.host.ui import (
    NotifyLevel,
    NoUI,
    Question,
    UIPort,
    UIRouteLostError,
    note_answer,
)

_NO_UI = NoUI()
_T = TypeVar("_T")


class RoutedUI:
    """A `UIPort` that forwards to the first available of console → fallback → `NoUI`."""

    def __init__(
        self,
        console: Callable[[], UIPort | None],
        fallback: UIPort | None,
        *,
        session_id: str | None = None,
    ) -> None:
        self._console = console
        self._fallback = fallback
        self._session_id = session_id

    @property
    def client(self) -> str | None:
        """The MCP client's name when the session's own port knows it (for the console)."""
        name = getattr(self._fallback, "client_name", None)
        return name if isinstance(name, str) else None

    @property
    def client_version(self) -> str | None:
        """The MCP client's version when the session's own port knows it."""
        version = getattr(self._fallback, "client_version", None)
        return version if isinstance(version, str) else None

    def _pick(self, skip: Sequence[UIPort] = ()) -> UIPort:
        console = self._console()
        if console is not None and console.available and console not in skip:
            return console
        fallback = self._fallback
        if fallback is not None and fallback.available and fallback not in skip:
            return fallback
        return _NO_UI

    @property
    def available(self) -> bool:
        return self._pick() is not _NO_UI

    @property
    def transport(self) -> str:
        """`console`, `elicitation`/the fallback's name, or `unavailable` (for diagnostics)."""
        return self._route_name(self._pick())

    def _route_name(self, port: UIPort) -> str:
        if port is _NO_UI:
            return "unavailable"
        if port is not self._fallback:
            return "console"
        return str(getattr(port, "transport_name", "fallback"))

    def _signed(self, question: Question) -> Question:
        """The question as ports see it: with this session and its MCP client as who asks."""
        return dataclasses.replace(question, session_id=self._session_id, client=self.client)

    async def _routed(self, ask: Callable[[UIPort], Awaitable[_T]]) -> _T:
        lost: list[UIPort] = []
        while True:
            # Each route is asked at most once (console, own port), then none.
            port = self._pick(lost) if len(lost) < 2 else _NO_UI
            note_answer(route=self._route_name(port), client=self.client)
            try:
                return await ask(port)
            except UIRouteLostError:
                if port is _NO_UI:
                    raise
                lost.append(port)

    async def confirm(self, question: Question) -> bool:
        signed = self._signed(question)
        return await self._routed(lambda port: port.confirm(signed))

    async def select(self, question: Question) -> str | None:
        signed = self._signed(question)
        return await self._routed(lambda port: port.select(signed))

    def notify(self, message: str, level: NotifyLevel = "info") -> None:
        self._pick().notify(message, level)
