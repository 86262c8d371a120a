"""Events: runtime state changes, execution diagnostics records, debug metadata and
warnings, newest at the bottom. Records carry names, flags and revisions only."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.widgets import Label, RichLog

from pct_tui.console import EventRecord
from pct_tui.screens.base import PctScreen

KIND_STYLES = {
    "runtime": "bold cyan",
    "diagnostics": "bold magenta",
    "debug": "bold yellow",
    "log": "bold red",
    "approval": "bold green",
}


def event_line(record: EventRecord) -> Text:
    line = Text()
    line.append(f"{record.clock} ", style="grey50")
    line.append(f"{record.kind:<11} ", style=KIND_STYLES.get(record.kind, "bold"))
    style = "bold red" if record.kind == "approval" and record.text.startswith("denied") else ""
    line.append(record.text, style=style)
    return line


class EventsScreen(PctScreen):
    MODE = "events"
    CSS_PATH = "events.tcss"

    def compose_body(self) -> ComposeResult:
        yield Label(
            "Events: runtime, approvals, diagnostics, debug metadata", classes="section-title"
        )
        yield RichLog(id="events-log", markup=False, wrap=True, max_lines=5000)

    def on_mount(self) -> None:
        log = self.query_one("#events-log", RichLog)
        for record in self.console.events:
            log.write(event_line(record))
        self._last = self.console.events[-1].seq if self.console.events else 0
        self.console.event_logged.subscribe(self, self._on_event)
        super().on_mount()

    def _on_event(self, record: EventRecord) -> None:
        if record.seq <= self._last:
            return
        self._last = record.seq
        self.query_one("#events-log", RichLog).write(event_line(record))
