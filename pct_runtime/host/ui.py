"""The UI port: how a capability asks a person something without knowing who answers.

Implementations: the Textual console (modal screens), a live console over the control
socket, MCP elicitation when the attached client supports it, and `NoUI` (headless:
approvals fail before any change). Each is handed the whole `Question`, diffs included.
"""

from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import Iterator
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Literal, Protocol, runtime_checkable

NotifyLevel = Literal["info", "warning", "error"]


@runtime_checkable
class UIPort(Protocol):
    @property
    def available(self) -> bool:
        """True when confirm/select can reach a person (a dialog-capable context)."""
        ...

    async def confirm(self, question: Question) -> bool:
        """Ask a yes/no question. Returns False on No, dismissal or cancellation."""
        ...

    async def select(self, question: Question) -> str | None:
        """Pick one of `question.options`; None when dismissed."""
        ...

    def notify(self, message: str, level: NotifyLevel = "info") -> None: ...


class UIUnavailableError(RuntimeError):
    """Raised by `NoUI` when a dialog is requested; callers map it to `approval-unavailable`."""


class UIRouteLostError(RuntimeError):
    """Raised by a port whose person went away mid-question (a remote console disconnected);
    the router then asks the next route instead of failing the call."""


class NoUI:
    """Headless: no dialog can be shown, so every approval must fail before any change."""

    @property
    def available(self) -> bool:
        return False

    async def confirm(self, question: Question) -> bool:
        raise UIUnavailableError("no interactive UI is attached")

    async def select(self, question: Question) -> str | None:
        raise UIUnavailableError("no interactive UI is attached")

    def notify(self, message: str, level: NotifyLevel = "info") -> None:
        return None


@dataclass(frozen=True)
class AskedDiff:
    """One file of a change asked about: its unified diff, and what happens to the file
    (`add`, `update`, `delete`, or `move` from `source`), so a remote approver draws it
    as the embedded console does."""

    path: str
    diff: str
    operation: Literal["add", "update", "delete", "move"] = "update"
    source: str | None = None


#: What a person answers: Yes/No to a confirm, the picked option of a select, None when
#: dismissed.
Answer = bool | str | None


@dataclass(frozen=True)
class Question:
    """One thing a person is asked, with all a port needs to show it.

    It travels explicitly from the asking step through the session's router (which adds
    who asks) to whichever port answers — the embedded console, a live console over the
    control socket, MCP elicitation — so a port shows a patch's diffs without knowing
    which capability asked, and nothing rides along in a context variable.
    """

    title: str
    message: str = ""
    #: A select's choices; empty for a confirm.
    options: tuple[str, ...] = ()
    #: Each file of the change asked about, read by the asker before asking (files are
    #: read in a thread there, never by a port on the loop).
    diffs: tuple[AskedDiff, ...] = ()
    #: Who asks, added by the session's UI router: the session and its MCP client's name.
    session_id: str | None = None
    client: str | None = None


@dataclass
class Answering:
    """Who a pending question went to and how it was answered, so the asking capability
    tells the model the truth (a client's automatic "no" is not a person's).

    The caller opens it with `answering()`; the UI router notes the `route` it asks
    (`console`, `elicitation`, `unavailable`), the port notes what came back. Mutable on
    purpose: a reader of the cell sees the route while the question is still pending.
    """

    route: str | None = None
    client: str | None = None
    #: The MCP answer (`accept`, `decline`, `cancel`) or `failed` when the request failed.
    action: str | None = None
    #: Answered faster than any person can read a question: the client answered itself.
    automatic: bool = False
    elapsed_ms: int | None = None

    def to_details(self) -> dict[str, object]:
        return {k: v for k, v in dataclasses.asdict(self).items() if v is not None}

    def client_refusal(self, request: str, *, later: str, settled: str) -> str:
        """What an MCP client's "no" to `request` was, as far as pct can tell.

        MCP clients answer `decline` both for a person and for themselves (`codex exec` has
        no one to ask, and declines in about 2 ms), so only an answer too fast for any person
        says nobody was asked; then `later` tells the model how a person can be reached.
        `settled` ends the text when a person may have answered.
        """
        client = f"The MCP client ({self.client})" if self.client else "The MCP client"
        if self.action == "failed":
            return f"{client} did not answer {request}. {later}"
        verb = _REFUSAL_VERBS.get(self.action or "", "refused")
        if self.automatic:
            return (
                f"{client} {verb} {request} by itself in {self.elapsed_ms} ms; no person was "
                f"asked. {later}"
            )
        return f"{client} or its user {verb} {request}. {settled}"


#: An MCP elicitation answer that is not a Yes, as a verb of the refusal text.
_REFUSAL_VERBS = {"decline": "declined", "cancel": "cancelled", "accept": "answered No to"}


ANSWERING: ContextVar[Answering | None] = ContextVar("pct_ui_answering", default=None)


@contextlib.contextmanager
def answering() -> Iterator[Answering]:
    """Record, for the block's question, who was asked and how they answered."""
    note = Answering()
    token = ANSWERING.set(note)
    try:
        yield note
    finally:
        ANSWERING.reset(token)


def note_answer(**fields: object) -> None:
    """Set `fields` on the current question's `Answering`, if a capability opened one."""
    note = ANSWERING.get()
    if note is not None:
        for key, value in fields.items():
            setattr(note, key, value)
