"""Status dashboard: how to attach, the sessions and their models, and every capability's
configured / effective / reason with its extra lines — for a fresh session and for each
attached one, then every other pct runtime of the agent dir with its sessions (its status
text is what a fresh session there gets). Redrawn when a runtime reports a change (no
polling)."""

from __future__ import annotations

from collections.abc import Callable
from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, VerticalScroll
from textual.widgets import Label, OptionList
from textual.widgets.option_list import Option

from pct_tui.facade import RuntimeFacade
from pct_tui.model import StatusPage
from pct_tui.screens.base import PctScreen
from pct_tui.widgets.cells import literal
from pct_tui.widgets.fit_text import FitText
from pct_tui.widgets.status_view import status_text

MONITOR_TEXT = (
    "Monitor (read-only): this console serves no MCP endpoint, saves no configuration, "
    "stops nothing and answers no approvals. Agents attach to `pct serve` or to a console "
    "started without --monitor."
)


class StatusScreen(PctScreen):
    MODE = "status"
    CSS_PATH = "status.tcss"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("c", "copy_attach", "Copy commands", id="status-copy"),
    ]

    def compose_body(self) -> ComposeResult:
        with Horizontal(id="status-body"):
            with VerticalScroll(id="status-left"):
                yield FitText("", id="config-path")
                yield FitText("Reading configuration…", id="config-status")
                yield Label("Sessions", classes="section-title")
                yield OptionList(id="status-sessions")
                yield Label("Attach an agent", id="attach-title", classes="section-title")
                yield FitText("Starting the MCP endpoint…", id="attach", whole=True)
            with VerticalScroll(id="status-right"):
                yield FitText("", id="status-tools")
                yield FitText("", id="status-text", style=status_text)

    def __init__(self, facade: RuntimeFacade) -> None:
        super().__init__(facade)
        #: Option id → what its page shows (a runtime's fresh session, or a session).
        self._pages: dict[str, Callable[[], StatusPage]] = {}

    def refresh_view(self) -> None:
        facade = self.facade
        attach = facade.attach_info
        attach_widget = self.query_one("#attach", FitText)
        if facade.read_only:  # a monitor attaches no agent: it says what it is instead
            self.query_one("#attach-title", Label).update("Monitor")
            attach_widget.set_text(MONITOR_TEXT)
        elif attach is not None:
            attach_widget.set_text("\n".join(attach.lines()))
            self.refresh_bindings()
        elif facade.serve_error:
            attach_widget.set_text(f"MCP endpoint failed: {facade.serve_error}")
        self.query_one("#config-path", FitText).set_text(f"Config: {facade.config_path}")
        load = self.query_one("#config-status", FitText)
        load.set_text(facade.load_message)
        load.set_class(facade.load_error, "error")
        sessions = self.query_one("#status-sessions", OptionList)
        selected = self._selected_id(sessions)
        options: list[Option] = []
        self._pages = {}
        for runtime in facade.runtimes():
            key = runtime.header_key  # ids follow their runtime and session across redraws
            self._pages[key] = runtime.status
            options.append(Option(literal(runtime.option), id=key))
            for session in runtime.sessions:
                session_key = f"{runtime.line_prefix}session:{session.id}"
                self._pages[session_key] = session.status
                options.append(Option(literal(session.option), id=session_key))
        sessions.set_options(options)
        ids = [o.id for o in options]
        # The first option is what a fresh session of this console's own runtime gets.
        current = selected if selected in ids else ids[0]
        sessions.highlighted = ids.index(current)
        self._show(current)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "copy_attach":  # offered only while there are commands to copy
            return self.facade.attach_info is not None and not self.facade.read_only
        return True

    def action_copy_attach(self) -> None:
        """Put the attach commands, exactly as shown and one per line, on the clipboard
        (OSC 52: the terminal must allow it; tmux needs `set-clipboard on`)."""
        attach = self.facade.attach_info
        if attach is None or self.facade.read_only:
            return
        self.app.copy_to_clipboard(attach.copy_text())
        self.notify(
            "Copied the attach commands (via OSC 52; if nothing was pasted, your terminal "
            "does not allow it: select them with Shift held instead)."
        )

    @staticmethod
    def _selected_id(sessions: OptionList) -> str | None:
        index = sessions.highlighted
        if index is None or index >= sessions.option_count:
            return None
        return sessions.get_option_at_index(index).id

    def _show(self, option_id: str | None) -> None:
        page = self._pages.get(option_id or "")
        if page is None:
            return
        shown = page()
        self.query_one("#status-tools", FitText).set_text(shown.headline)
        self.query_one("#status-text", FitText).set_text(shown.text)

    def on_option_list_option_highlighted(self, event: OptionList.OptionHighlighted) -> None:
        self._show(event.option.id)
