"""The console's `UIPort`: approvals as modal screens, one at a time, in arrival order.

A capability awaits `confirm()`; the request (an `asyncio.Future`) joins a queue, and the
app shows the oldest one as a modal. Answering resolves the future and shows the next.
A request whose caller went away (an MCP cancellation) leaves the queue, and its modal is
dismissed if it was showing, so no stale prompt lingers.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from pct_runtime.host.ui import NotifyLevel

RequestKind = Literal["confirm", "select"]


@dataclass(eq=False)
class ApprovalRequest:
    """One question waiting for a person."""

    kind: RequestKind
    title: str
    message: str
    options: tuple[str, ...] = ()
    future: asyncio.Future[Any] = field(
        default_factory=lambda: asyncio.get_running_loop().create_future()
    )


class ApprovalQueue:
    """FIFO of pending requests; `show(request)` is called for the head when it changes.

    `show` receives the request to display (or None when the queue is empty); `hide`
    removes a displayed request that was withdrawn.
    """

    def __init__(
        self,
        show: Callable[[ApprovalRequest], None],
        hide: Callable[[ApprovalRequest], None],
        changed: Callable[[int], None] = lambda pending: None,
    ) -> None:
        self._show = show
        self._hide = hide
        self._changed = changed
        self._pending: deque[ApprovalRequest] = deque()
        self.current: ApprovalRequest | None = None

    def __len__(self) -> int:
        return len(self._pending) + (1 if self.current is not None else 0)

    async def ask(self, request: ApprovalRequest) -> Any:
        self._pending.append(request)
        self._changed(len(self))
        self._next()
        try:
            return await asyncio.shield(request.future)
        except asyncio.CancelledError:
            self.withdraw(request)
            raise

    def answer(self, request: ApprovalRequest, value: Any) -> None:
        """Resolve `request` (from its modal's dismissal) and show the next one."""
        if not request.future.done():
            request.future.set_result(value)
        if self.current is request:
            self.current = None
        elif request in self._pending:
            self._pending.remove(request)
        self._changed(len(self))
        self._next()

    def withdraw(self, request: ApprovalRequest) -> None:
        if not request.future.done():
            request.future.cancel()
        if self.current is request:
            self.current = None
            self._hide(request)
        elif request in self._pending:
            self._pending.remove(request)
        self._changed(len(self))
        self._next()

    def cancel_all(self) -> None:
        """At shutdown: every pending question is answered No (dismissed)."""
        for request in [*([self.current] if self.current else []), *self._pending]:
            if not request.future.done():
                request.future.set_result(False if request.kind == "confirm" else None)
        self._pending.clear()
        self.current = None

    def _next(self) -> None:
        if self.current is not None or not self._pending:
            return
        self.current = self._pending.popleft()
        self._show(self.current)


class ConsoleUI:
    """The console implements the runtime's `UIPort` (attach it with `Runtime.attach_ui`)."""

    transport_name = "console"

    def __init__(self, queue: ApprovalQueue, notify: Callable[[str, NotifyLevel], None]) -> None:
        self.queue = queue
        self._notify = notify
        self.enabled = True

    @property
    def available(self) -> bool:
        return self.enabled

    async def confirm(self, title: str, message: str) -> bool:
        result = await self.queue.ask(ApprovalRequest("confirm", title, message))
        return result is True

    async def select(self, title: str, options: Sequence[str]) -> str | None:
        choices = tuple(options)
        result = await self.queue.ask(ApprovalRequest("select", title, "", choices))
        return result if isinstance(result, str) and result in choices else None

    def notify(self, message: str, level: NotifyLevel = "info") -> None:
        self._notify(message, level)
