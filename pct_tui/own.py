"""This console's own runtime as the console model's `RuntimeView`.

The embedded `Runtime` lives in this process, so its sessions, status and work are read
live from it (through `Console`); another runtime's come from its snapshots
(`remote.RemoteRuntime`). The screens draw both through the same protocol.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from pct_runtime.host.pi.names import OWNED_TOOL_NAMES
from pct_runtime.host.ui import Question
from pct_runtime.runtime import RuntimeSession
from pct_tui.console import Console
from pct_tui.model import ActionResult, StatusPage
from pct_tui.serving import AttachInfo
from pct_tui.state.approvals import who_text
from pct_tui.state.planning import fresh_plan, fresh_status_text
from pct_tui.state.work import LocalWork

#: The Status screen's first line: what a fresh session of this runtime gets.
FRESH_OPTION = "Fresh session (what a new client gets)"
STARTING_TEXT = "Pi Codex Toolkit\nStarting the runtime…"


def tools_line(tools: Sequence[str], no_model: bool) -> str:
    line = f"MCP tools: {', '.join(tools) or 'none'}"
    if no_model and not tools:
        line += " (no current model, so no execution rule matches: see below)"
    return line


@dataclass(frozen=True)
class OwnSession:
    """One session attached to this console's endpoint."""

    console: Console
    session: RuntimeSession

    @property
    def id(self) -> str:
        return self.session.id

    @property
    def model(self) -> str:
        model = self.session.model
        return model.key if model else "—"

    @property
    def cells(self) -> tuple[str, str, str]:
        return (f"session ({self.session.kind})", self.model, "")

    @property
    def option(self) -> str:
        return f"{self.id} ({self.session.kind}) · {self.model}"

    @property
    def detail(self) -> str:
        return (
            f"Session {self.id} of this console ({self.session.kind}) · model {self.model}\n"
            "Enter on a job or cell opens its output."
        )

    def status(self) -> StatusPage:
        if not self.console.ready:
            return StatusPage("", STARTING_TEXT)
        session = self.session
        plan = session.plan
        no_model = plan is not None and plan.rules_managed and session.model is None
        return StatusPage(tools_line(session.projection.visible, no_model), session.status_text())


class OwnRuntime:
    """The embedded runtime: its endpoint (`attach()`, None before serving or in a monitor)."""

    line_prefix = ""
    header_key = "runtime:local"
    where = None
    option = FRESH_OPTION

    def __init__(self, console: Console, attach: Callable[[], AttachInfo | None]) -> None:
        self.console = console
        self._attach = attach

    @property
    def about(self) -> str:
        attach = self._attach()
        if attach is None:
            return "This console's own runtime (it serves no MCP endpoint)."
        return f"This console's own runtime: agents attached to its endpoint {attach.url}"

    @property
    def header(self) -> tuple[str, str, str, str]:
        attach = self._attach()
        endpoint = "monitor" if self.console.read_only else "http"  # a monitor serves none
        return ("this console", "pct-tui", endpoint, attach.url if attach is not None else "")

    @property
    def sessions(self) -> tuple[OwnSession, ...]:
        return tuple(OwnSession(self.console, s) for s in self.console.runtime.sessions)

    def session(self, session_id: str) -> OwnSession | None:
        session = self.console.runtime.session(session_id)
        return OwnSession(self.console, session) if session is not None else None

    @property
    def work(self) -> Sequence[LocalWork]:
        return self.console.work

    def status(self) -> StatusPage:
        if not self.console.ready:
            return StatusPage("", STARTING_TEXT)
        runtime = self.console.runtime
        plan = fresh_plan(runtime)
        tools = tuple(n for n in plan.active if n in OWNED_TOOL_NAMES)
        no_model = plan.rules_managed and plan.model is None
        return StatusPage(tools_line(tools, no_model), fresh_status_text(runtime))

    async def end_session(self, session_id: str) -> ActionResult:
        session = self.console.runtime.session(session_id)
        if session is None:
            return ActionResult(False, f"session {session_id} has already ended")
        await session.close()
        session.record_action("end_session", f"session {session.id}")  # the journal
        return ActionResult(True, "ended")

    def who_asks(self, question: Question) -> str:
        """`session … · client … · model …` for this runtime's question (— for what the
        caller did not say; empty when it came from outside any session)."""
        session_id = question.session_id
        if session_id is None and question.client is None:
            return ""
        session = self.console.runtime.session(session_id) if session_id else None
        model = session.model.key if session is not None and session.model else None
        return who_text(session_id, question.client, model)
