"""Status dashboard: how to attach, the sessions and their models, and every capability's
configured / effective / reason with its extra lines — for a fresh session and for each
attached one, then every other pct runtime of the agent dir with its sessions (its status
text is what a fresh session there gets). Redrawn when a runtime reports a change (no
polling)."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.containers import Horizontal, VerticalScroll
from textual.widgets import Label, OptionList
from textual.widgets.option_list import Option

from pct_tui.facade import RuntimeFacade
from pct_tui.remote import RemoteRuntime
from pct_tui.screens.base import PctScreen
from pct_tui.widgets.cells import literal
from pct_tui.widgets.fit_text import FitText
from pct_tui.widgets.status_view import status_text

FRESH = "fresh"
MONITOR_TEXT = (
    "Monitor (read-only): this console serves no MCP endpoint, saves no configuration, "
    "stops nothing and answers no approvals. Agents attach to `pct serve` or to a console "
    "started without --monitor."
)


class StatusScreen(PctScreen):
    MODE = "status"
    CSS_PATH = "status.tcss"

    def compose_body(self) -> ComposeResult:
        with Horizontal(id="status-body"):
            with VerticalScroll(id="status-left"):
                yield FitText("", id="config-path")
                yield FitText("Reading configuration…", id="config-status")
                yield Label("Sessions", classes="section-title")
                yield OptionList(id="status-sessions")
                yield Label("Attach an agent", classes="section-title")
                yield FitText("Starting the MCP endpoint…", id="attach")
            with VerticalScroll(id="status-right"):
                yield FitText("", id="status-tools")
                yield FitText("", id="status-text", style=status_text)

    def __init__(self, facade: RuntimeFacade) -> None:
        super().__init__(facade)
        #: Option id → (other runtime, its session id or None for the runtime itself).
        self._remote: dict[str, tuple[RemoteRuntime, str | None]] = {}

    def refresh_view(self) -> None:
        facade = self.facade
        attach = facade.attach_info
        attach_widget = self.query_one("#attach", FitText)
        if facade.read_only:
            attach_widget.set_text(MONITOR_TEXT)
        elif attach is not None:
            attach_widget.set_text("\n".join(attach.lines()))
        elif facade.serve_error:
            attach_widget.set_text(f"MCP endpoint failed: {facade.serve_error}")
        self.query_one("#config-path", FitText).set_text(f"Config: {facade.config_path}")
        load = self.query_one("#config-status", FitText)
        load.set_text(facade.load_message)
        load.set_class(facade.load_error, "error")
        sessions = self.query_one("#status-sessions", OptionList)
        selected = self._selected_id(sessions)
        options = [Option("Fresh session (what a new client gets)", id=FRESH)]
        for session in facade.sessions:
            model = session.model.key if session.model else "—"
            options.append(
                Option(literal(f"{session.id} ({session.kind}) · {model}"), id=session.id)
            )
        self._remote = {}
        for index, runtime in enumerate(facade.remotes.all() if facade.remotes else []):
            key = f"remote:{index}"
            self._remote[key] = (runtime, None)
            options.append(Option(literal(runtime.label), id=key))
            for number, info in enumerate(runtime.sessions):
                session_key = f"{key}:{number}"
                self._remote[session_key] = (runtime, info.id)
                model = info.model or "—"
                options.append(Option(literal(f"  {info.id} · {model}"), id=session_key))
        sessions.set_options(options)
        ids = [o.id for o in options]
        sessions.highlighted = ids.index(selected) if selected in ids else 0
        self._show(selected if selected in ids else FRESH)

    @staticmethod
    def _selected_id(sessions: OptionList) -> str:
        index = sessions.highlighted
        if index is None or index >= sessions.option_count:
            return FRESH
        return sessions.get_option_at_index(index).id or FRESH

    def _show(self, session_id: str) -> None:
        if session_id in self._remote:
            self._show_remote(*self._remote[session_id])
            return
        facade = self.facade
        session = facade.session(session_id) if session_id != FRESH else None
        tools: tuple[str, ...] = ()
        no_model = False
        if not self.console.ready:
            text = "Pi Codex Toolkit\nStarting the runtime…"
        elif session is not None:
            text = session.status_text()
            tools = session.projection.visible
            plan = session.plan
            no_model = plan is not None and plan.rules_managed and session.model is None
        else:
            text = facade.fresh_status_text()
            plan = facade.fresh_plan()
            tools = facade.owned_tools(plan)
            no_model = plan.rules_managed and plan.model is None
        line = f"MCP tools: {', '.join(tools) or 'none'}"
        if no_model and not tools:
            line += " (no current model, so no execution rule matches: see below)"
        self.query_one("#status-tools", FitText).set_text(line if self.console.ready else "")
        self.query_one("#status-text", FitText).set_text(text)

    def _show_remote(self, runtime: RemoteRuntime, session_id: str | None) -> None:
        info = runtime.info
        if session_id is None:
            line = f"{runtime.label} · MCP {info.mcp}"
            text = runtime.status_text
        else:
            line = runtime.session_line(session_id)
            text = f"A fresh session of that runtime:\n{runtime.status_text}"
        self.query_one("#status-tools", FitText).set_text(line)
        self.query_one("#status-text", FitText).set_text(text)

    def on_option_list_option_highlighted(self, event: OptionList.OptionHighlighted) -> None:
        self._show(event.option.id or FRESH)
