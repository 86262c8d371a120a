"""The console's one model of a runtime: this console's own and every other one alike.

Screens see runtimes, sessions and work only through these protocols. `console.py`
implements them for the embedded runtime (live objects in this process), `remote.py` for
another runtime of the agent dir (its live-control snapshots and client), so the Status,
Sessions and output screens draw and act on either without asking which it is. What truly
differs between them (a header's cells, a status page's text, who to ask for a stop) is
answered by the implementation, never by a screen branching on the type.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol

from pct_runtime.serve.live.protocol import MAX_TYPED_BYTES, ActionResult

__all__ = ["MAX_TYPED_BYTES", "ActionResult", "RuntimeView", "SessionView", "StatusPage", "Work"]


@dataclass(frozen=True)
class StatusPage:
    """The Status screen's right pane for one option: a headline and the status text."""

    headline: str
    text: str


class Work(Protocol):
    """A shell job or a code cell of one session, as Sessions and the viewer show it."""

    @property
    def session_id(self) -> str: ...

    @property
    def kind(self) -> str:
        """`shell` or `code`."""
        ...

    @property
    def id(self) -> str: ...

    @property
    def state(self) -> str: ...

    @property
    def running(self) -> bool: ...

    @property
    def stop_known(self) -> bool:
        """A stop is known here to be under way, so `x` says so instead of asking again
        (for another runtime's work that runtime answers the stop itself)."""
        ...

    @property
    def exit_code(self) -> str: ...

    @property
    def where(self) -> str | None:
        """The other runtime it runs in (its label); None for this console's own."""
        ...

    def recovery_paths(self) -> list[str]: ...

    def recovery_lines(self) -> list[str]: ...

    def initial_text(self) -> str:
        """What the viewer shows before the first streamed chunk."""
        ...

    def follow(self, listener: Callable[[str], None]) -> Callable[[], None]:
        """Send new output to `listener` until the returned function is called."""
        ...

    async def stop(self) -> ActionResult:
        """Stop it for the person at this console (journaled where it runs)."""
        ...

    @property
    def takes_input(self) -> bool:
        """A running shell job whose stdin is open: the viewer lets the person type."""
        ...

    async def type_input(self, text: str) -> ActionResult:
        """Type `text` into its stdin for the person at this console (a password prompt):
        the model's next read and the journal get only how many bytes."""
        ...


class SessionView(Protocol):
    """One attached session of a runtime."""

    @property
    def id(self) -> str: ...

    @property
    def cells(self) -> tuple[str, str, str]:
        """Its Sessions row after the id: kind, model and client."""
        ...

    @property
    def option(self) -> str:
        """Its line in the Status screen's list."""
        ...

    @property
    def detail(self) -> str:
        """The Sessions detail line while it is selected."""
        ...

    def status(self) -> StatusPage: ...


class RuntimeView(Protocol):
    """One pct runtime: its header, sessions, work, and the acts it takes."""

    @property
    def line_prefix(self) -> str:
        """Prefix of its Sessions row keys (a cursor follows its row across redraws)."""
        ...

    @property
    def header_key(self) -> str: ...

    @property
    def header(self) -> tuple[str, str, str, str]:
        """Its Sessions header row: name, kind, transport and MCP endpoint."""
        ...

    @property
    def about(self) -> str:
        """The Sessions detail line while its header is selected."""
        ...

    @property
    def where(self) -> str | None:
        """Its label when it is another runtime (said in confirmations); None when own."""
        ...

    @property
    def option(self) -> str:
        """Its own line in the Status screen's list (what a fresh session there gets)."""
        ...

    @property
    def sessions(self) -> Sequence[SessionView]: ...

    def session(self, session_id: str) -> SessionView | None: ...

    @property
    def work(self) -> Sequence[Work]: ...

    def status(self) -> StatusPage:
        """What a fresh session of this runtime gets."""
        ...

    async def end_session(self, session_id: str) -> ActionResult: ...
