"""Remote approvals: the runtime's console route while a live console is connected.

Attached to the runtime (`Runtime.attach_remote_ui`) while at least one `console`
connection is open, so every session's approval order is console → its own MCP
elicitation → none. A question goes to every connection (monitors see it too, read-only);
the first console answer wins and every connection gets `approval_closed`. When no
console that reads its stream is left, the pending question is withdrawn and
`UIRouteLostError` hands it to the next route at once — nothing waits on a console that
went away. The spec sets no approval time limit: a question waits as long as a console
is connected and its call is not cancelled (as in the embedded console).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import uuid
from dataclasses import dataclass
from typing import Literal, Protocol

from pct_runtime.host.ui import Answer, NotifyLevel, Question, UIRouteLostError
from pct_runtime.serve.live.protocol import (
    ActionResult,
    ApprovalClosed,
    ApprovalInfo,
    ClosedReason,
    DiffInfo,
)

_log = logging.getLogger(__name__)

#: How often a waiting question re-checks that a console still reads its stream.
ROUTE_CHECK_SECONDS = 1.0


class ApprovalHub(Protocol):
    """What the broker needs from the live hub."""

    @property
    def approvers(self) -> int:
        """Console connections open and reading now."""
        ...

    def broadcast_approval(self, info: ApprovalInfo) -> None: ...

    def broadcast_closed(self, closed: ApprovalClosed) -> None: ...

    def client_label(self, session_id: str | None) -> str | None: ...

    def note(self, kind: str, text: str) -> None: ...


@dataclass(eq=False)
class _Pending:
    info: ApprovalInfo
    future: asyncio.Future[Answer]


class RemoteApprovals:
    """A `UIPort` answered by live consoles."""

    transport_name = "console"

    def __init__(self, hub: ApprovalHub) -> None:
        self._hub = hub
        self._pending: dict[str, _Pending] = {}
        self._routes = asyncio.Event()

    @property
    def available(self) -> bool:
        return self._hub.approvers > 0

    @property
    def pending(self) -> list[ApprovalInfo]:
        return [p.info for p in self._pending.values()]

    def routes_changed(self) -> None:
        """A console connected or went away: waiting questions re-check at once."""
        self._routes.set()

    async def confirm(self, question: Question) -> bool:
        return await self._ask("confirm", question) is True

    async def select(self, question: Question) -> str | None:
        value = await self._ask("select", question)
        return value if isinstance(value, str) and value in question.options else None

    def notify(self, message: str, level: NotifyLevel = "info") -> None:
        self._hub.note("notify", f"{level}: {message}")

    async def _ask(self, kind: Literal["confirm", "select"], question: Question) -> Answer:
        if not self.available:
            raise UIRouteLostError("no live console is connected")
        session_id = question.session_id
        title = question.title
        info = ApprovalInfo(
            request_id=f"approval-{uuid.uuid4().hex[:12]}",
            kind=kind,
            title=title,
            message=question.message,
            options=question.options if kind == "select" else (),
            session_id=session_id,
            client=self._hub.client_label(session_id),
            diffs=tuple(DiffInfo(d.path, d.diff, d.operation, d.source) for d in question.diffs),
            runtime_pid=os.getpid(),
        )
        pending = _Pending(info, asyncio.get_running_loop().create_future())
        self._pending[info.request_id] = pending
        self._hub.note("approval", f"asked {info.request_id} session={session_id}: {title}")
        self._hub.broadcast_approval(info)
        reason: ClosedReason = "withdrawn"
        try:
            while not pending.future.done():
                if not self.available:
                    self._hub.note("approval", f"{info.request_id}: no console left; next route")
                    raise UIRouteLostError("the live console went away")
                self._routes.clear()
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._routes.wait(), ROUTE_CHECK_SECONDS)
            if pending.future.cancelled():  # the hub is closing
                raise UIRouteLostError("the live control channel closed")
            reason = "answered"
            return pending.future.result()
        finally:
            self._pending.pop(info.request_id, None)
            if not pending.future.done():
                pending.future.cancel()
            self._hub.broadcast_closed(ApprovalClosed(info.request_id, reason))

    def answer(self, request_id: str, value: object) -> ActionResult:
        """The first valid answer wins; a later one is told the question is closed."""
        pending = self._pending.get(request_id)
        if pending is None or pending.future.done():
            return ActionResult(False, f"approval {request_id} is no longer pending")
        info = pending.info
        if info.kind == "confirm" and not (value is None or isinstance(value, bool)):
            return ActionResult(False, "a confirm takes true, false or null (dismiss)")
        if info.kind == "select" and not (value is None or value in info.options):
            choices = ", ".join(info.options)
            return ActionResult(False, f"a select takes one of: {choices}; or null (dismiss)")
        answer: Answer = value if isinstance(value, bool | str) else None
        pending.future.set_result(answer)
        self._routes.set()  # wakes the waiting question
        if isinstance(answer, str):
            verdict = f"picked {answer}"
        else:
            verdict = "approved" if answer is True else "denied" if answer is False else "dismissed"
        self._hub.note("approval", f"{verdict} {request_id}")
        return ActionResult(True, verdict)

    def cancel_all(self) -> None:
        """At shutdown: every pending question falls to the next route."""
        for pending in list(self._pending.values()):
            if not pending.future.done():
                pending.future.cancel()
        self._routes.set()
