"""UI routing: the console when one is attached, else the session's own port, else none.

A capability asks `ctx.ui`; this proxy decides, at the moment of asking, who answers:
the attached console (modal screens), otherwise the fallback given for the session or the
call (MCP elicitation when the client supports it), otherwise `NoUI`, which fails before
any change so the capability reports `approval-unavailable`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from pct_runtime.host.ui import NotifyLevel, NoUI, UIPort, asking

_NO_UI = NoUI()


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

    def _pick(self) -> UIPort:
        console = self._console()
        if console is not None and console.available:
            return console
        if self._fallback is not None and self._fallback.available:
            return self._fallback
        return _NO_UI

    @property
    def available(self) -> bool:
        return self._pick() is not _NO_UI

    @property
    def transport(self) -> str:
        """`console`, `elicitation`/the fallback's name, or `unavailable` (for diagnostics)."""
        picked = self._pick()
        if picked is _NO_UI:
            return "unavailable"
        if picked is self._console():
            return "console"
        return str(getattr(picked, "transport_name", "fallback"))

    async def confirm(self, title: str, message: str) -> bool:
        with asking(session_id=self._session_id, client=self.client):
            return await self._pick().confirm(title, message)

    async def select(self, title: str, options: Sequence[str]) -> str | None:
        with asking(session_id=self._session_id, client=self.client):
            return await self._pick().select(title, options)

    def notify(self, message: str, level: NotifyLevel = "info") -> None:
        self._pick().notify(message, level)
