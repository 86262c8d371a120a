"""The console's `UIPort` and its one approval queue: every question — this console's
runtime's and every other runtime's — as a modal, one at a time, in arrival order.

A capability awaits `confirm()`; the request (an `asyncio.Future`) joins the queue, and the
app shows the oldest one as a modal. Answering resolves the future and shows the next.
A request whose caller went away (an MCP cancellation, another runtime closing it or going
away) leaves the queue, and its modal is dismissed if it was showing, so no stale prompt
lingers.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Literal, Protocol

from pct_runtime.host.ui import Answer, NotifyLevel, Question
from pct_tui.widgets.patch_view import FileDiff

__all__ = ["Answer", "ApprovalQueue", "ApprovalRequest", "ConsoleUI", "drawn_diffs", "who_text"]

RequestKind = Literal["confirm", "select"]


class AskedFile(Protocol):
    """One file of a change as a runtime sends it (`host.ui.AskedDiff`, the live
    protocol's `DiffInfo`)."""

    @property
    def path(self) -> str: ...
    @property
    def diff(self) -> str: ...
    @property
    def operation(self) -> str: ...
    @property
    def source(self) -> str | None: ...


def drawn_diffs(diffs: Iterable[AskedFile]) -> tuple[FileDiff, ...]:
    """A change's per-file diffs in the shape the approval modal draws, the same for this
    runtime's question and another's."""
    return tuple(
        FileDiff(d.operation, d.path, d.source, tuple(d.diff.split("\n")) if d.diff else ())
        for d in diffs
    )


def who_text(session_id: str | None, client: str | None, model: str | None) -> str:
    """Who asks a question, the same words for this runtime's and another's: `session … ·
    client … · model …`, with — for what the caller did not say."""
    return f"session {session_id or '—'} · client {client or '—'} · model {model or '—'}"


@dataclass(eq=False)
class ApprovalRequest:
    """One question waiting for a person, from whichever runtime asked."""

    kind: RequestKind
    title: str
    message: str
    options: tuple[str, ...] = ()
    #: Who asks (`session … · client … · model …`, after the runtime's label for another
    #: runtime's question); empty when the question came from outside any session.
    who: str = ""
    #: For a patch: each file's diff against its current content.
    diffs: tuple[FileDiff, ...] = ()
    #: The other runtime that asked and its id of the question; None for this console's.
    source: object | None = None
    ref: str | None = None
    #: Shown to a `--monitor` console: watched, never answered here.
    read_only: bool = False
    future: asyncio.Future[Answer] = field(
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

    def put(self, request: ApprovalRequest) -> None:
        """Queue `request` now (another runtime's question is in the queue from the moment
        it arrives, so its close or a re-send finds it)."""
        if request.future.done() or request is self.current or request in self._pending:
            return
        self._pending.append(request)
        self._changed(len(self))
        self._next()

    async def ask(self, request: ApprovalRequest) -> Answer:
        """Queue `request` unless it is already waiting, then wait for its answer."""
        self.put(request)
        try:
            return await asyncio.shield(request.future)
        except asyncio.CancelledError:
            self.withdraw(request)
            raise

    def answer(self, request: ApprovalRequest, value: Answer) -> None:
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

    def find(self, source: object, ref: str) -> ApprovalRequest | None:
        """The waiting request another runtime knows as `ref`, if any."""
        return next((r for r in self._all() if r.source is source and r.ref == ref), None)

    def withdraw_from(self, source: object) -> None:
        """Take out every question of a runtime that went away (or that we left)."""
        for request in [r for r in self._all() if r.source is source]:
            self.withdraw(request)

    def _all(self) -> list[ApprovalRequest]:
        return [*([self.current] if self.current else []), *self._pending]

    def cancel_all(self) -> None:
        """At shutdown: every pending question is answered No (dismissed)."""
        for request in self._all():
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
    """The console implements the runtime's `UIPort` (attach it with `Runtime.attach_ui`).

    Every question and its answer is also reported to `record` (the Events screen), so a
    denied nested call is visible as denied next to the call that carried it.
    """

    transport_name = "console"

    def __init__(
        self,
        queue: ApprovalQueue,
        notify: Callable[[str, NotifyLevel], None],
        record: Callable[[ApprovalRequest, str], None] = lambda request, phase: None,
        who: Callable[[Question], str] = lambda question: "",
    ) -> None:
        self.queue = queue
        self._notify = notify
        self._record = record
        self._who = who
        self.enabled = True

    @property
    def available(self) -> bool:
        return self.enabled

    def request(self, kind: RequestKind, question: Question) -> ApprovalRequest:
        """This runtime's question as the queue holds it (who asks, the drawn diffs)."""
        return ApprovalRequest(
            kind,
            question.title,
            question.message,
            question.options if kind == "select" else (),
            who=self._who(question),
            diffs=drawn_diffs(question.diffs),
        )

    async def confirm(self, question: Question) -> bool:
        return await self.ask(self.request("confirm", question)) is True

    async def select(self, question: Question) -> str | None:
        result = await self.ask(self.request("select", question))
        return result if isinstance(result, str) and result in question.options else None

    async def ask(self, request: ApprovalRequest) -> Answer:
        """Queue a question (confirm's, select's or another runtime's) and record it and
        its answer."""
        self._record(request, "asked (read-only here)" if request.read_only else "asked")
        try:
            result = await self.queue.ask(request)
        except asyncio.CancelledError:
            self._record(request, "closed" if request.read_only else "withdrawn")
            raise
        if request.read_only:  # hidden here; its answer comes as the runtime's event
            return None
        if request.kind == "confirm":
            self._record(request, "approved" if result is True else "denied")
        else:
            self._record(request, f"picked {result}" if result is not None else "dismissed")
        return result

    def notify(self, message: str, level: NotifyLevel = "info") -> None:
        self._notify(message, level)
