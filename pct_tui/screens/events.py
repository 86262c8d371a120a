"""Events: runtime state changes, execution diagnostics records, debug metadata and
warnings, newest at the bottom. Records carry names, flags and revisions only."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.widgets import Label, RichLog

from pct_runtime.output.terminal_text import visible
from pct_tui.console import EventRecord
from pct_tui.screens.base import PctScreen
from pct_tui.widgets.fit_text import fit_words

PREFIX = len("12:00:00 ") + 12  # clock and kind columns
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
    line.append(visible(record.text, lines=True), style=style)  # names a model or peer chose
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
        self._last = 0
        self.console.event_logged.subscribe(self, self._on_event)
        super().on_mount()
        # After the first layout, so the backlog is drawn at the log's width.
        self.call_after_refresh(self._backlog)

    def _backlog(self) -> None:
        for record in list(self.console.events):
            self._on_event(record)

    def _on_event(self, record: EventRecord) -> None:
        if record.seq <= self._last:
            return
        self._last = record.seq
        log = self.query_one("#events-log", RichLog)
        width = log.scrollable_content_region.width
        if width <= 0:
            log.write(event_line(record))
            return
        # Wrap at the log's own width (not the console's measure), long paths shortened in
        # the middle rather than broken mid-word.
        fitted = EventRecord(
            record.seq, record.clock, record.kind, fit_words(record.text, width - PREFIX)
        )
        log.write(event_line(fitted), width=width)
