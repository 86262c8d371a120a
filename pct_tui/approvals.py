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
from typing import TYPE_CHECKING, Literal

from pct_runtime.host.ui import ASKER, AskedDiff, Asker, NotifyLevel

if TYPE_CHECKING:
    from pct_runtime.capabilities.apply_patch.preview import FileDiff

RequestKind = Literal["confirm", "select"]


#: A patch's per-file diffs as the approval modal draws them.
FileDiffs = list["FileDiff"]

#: What a modal answers: Yes/No for a confirm, the picked option (None: dismissed).
Answer = bool | str | None


def who_text(session_id: str | None, client: str | None, model: str | None) -> str:
    """Who asks a question, the same words for this runtime's and another's: `session … ·
    client … · model …`, with — for what the caller did not say."""
    return f"session {session_id or '—'} · client {client or '—'} · model {model or '—'}"


@dataclass(eq=False)
class ApprovalRequest:
    """One question waiting for a person."""

    kind: RequestKind
    title: str
    message: str
    options: tuple[str, ...] = ()
    #: Who asks (session, MCP client) and about what, when the caller said so.
    asker: Asker | None = None
    #: For a preflighted patch: each file's diff against its current content.
    diffs: list[FileDiff] | None = None
    #: Who asks, for a question from another runtime (its label, session and client).
    origin: str | None = None
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

    async def ask(self, request: ApprovalRequest) -> Answer:
        self._pending.append(request)
        self._changed(len(self))
        self._next()
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
    ) -> None:
        self.queue = queue
        self._notify = notify
        self._record = record
        self.enabled = True

    @property
    def available(self) -> bool:
        return self.enabled

    async def confirm(self, title: str, message: str) -> bool:
        asker = ASKER.get()
        request = ApprovalRequest("confirm", title, message, asker=asker, diffs=await _diffs(asker))
        result = await self.ask(request)
        return result is True

    async def select(self, title: str, options: Sequence[str]) -> str | None:
        choices = tuple(options)
        request = ApprovalRequest("select", title, "", choices, asker=ASKER.get())
        result = await self.ask(request)
        return result if isinstance(result, str) and result in choices else None

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


async def _diffs(asker: Asker | None) -> list[FileDiff] | None:
    """The real diff of a preflighted patch (read in a thread; None when not a patch)."""
    if asker is None or asker.subject is None:
        return None
    try:  # any failure here still shows the modal, with the raw patch
        # Deferred for start-up time: apply_patch loads after the first frame.
        from pct_runtime.capabilities.apply_patch.executor import PreparedPatch
        from pct_runtime.capabilities.apply_patch.preview import file_diffs

        if not isinstance(asker.subject, PreparedPatch):
            return None
        return await asyncio.to_thread(file_diffs, asker.subject)
    except Exception:
        return None


def remote_file_diffs(diffs: Sequence[AskedDiff]) -> FileDiffs | None:
    """Another runtime's per-file diffs in the shape the approval modal draws (the same
    operation, path and move source the embedded console would show)."""
    if not diffs:
        return None
    # Deferred for start-up time: apply_patch loads after the first frame.
    from pct_runtime.capabilities.apply_patch.preview import FileDiff

    return [FileDiff(d.operation, d.path, d.source, tuple(d.diff.splitlines())) for d in diffs]
