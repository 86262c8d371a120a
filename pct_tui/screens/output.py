"""The live output viewer of one shell job or code cell, of this console's runtime or
streamed from another one (the same batched, never-dropping log either way).

`i` opens a hidden input line for a running shell job: what the person types there (a sudo
or ssh password) goes to the job's stdin with a newline, and neither the model nor the
journal sees it, only how many bytes were typed."""

from __future__ import annotations

from collections.abc import Callable
from typing import ClassVar

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.screen import Screen
from textual.widgets import Footer, Header, Input, Static

from pct_tui.console import Console
from pct_tui.model import Work
from pct_tui.widgets.fit_text import FitText
from pct_tui.widgets.output_log import OutputLog


class OutputScreen(Screen[None]):
    CSS_PATH = "output.tcss"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,q", "close", "Back", id="output-back"),
        Binding("f,end", "follow", "Follow", id="output-follow"),
        Binding("i", "type_input", "Type to stdin", id="output-type"),
    ]

    def __init__(self, row: Work, console: Console) -> None:
        super().__init__()
        self.row = row
        self.console = console
        self._stop_following: Callable[[], None] | None = None

    def compose(self) -> ComposeResult:
        yield Header()
        yield Static("", id="output-title", markup=False)
        yield OutputLog(id="output-log")
        yield FitText("", id="output-recovery")
        typed = Input(
            placeholder="typed into stdin, not shown; Enter sends it with a newline, Escape "
            "cancels",
            password=True,
            id="output-input",
            compact=True,
        )
        typed.display = False
        yield typed
        yield Footer()

    def on_mount(self) -> None:
        log = self.query_one(OutputLog)
        log.on_follow = lambda _: self._update_title()
        log.feed(self.row.initial_text())
        self._stop_following = self.row.follow(log.feed)
        self._update_title()
        self.console.work_changed.subscribe(self, lambda _: self._update_title())

    def _update_title(self) -> None:
        row = self.row
        where = f" · {row.where}" if row.where is not None else ""
        self.query_one("#output-title", Static).update(
            f"{row.kind} {row.id} · session {row.session_id}{where} · {row.state} · exit "
            f"{row.exit_code}"
            + ("" if self.query_one(OutputLog).following else " · paused: f or End follows")
        )
        self.query_one("#output-recovery", FitText).set_text("\n".join(row.recovery_lines()))

    def on_unmount(self) -> None:
        if self._stop_following is not None:
            self._stop_following()
            self._stop_following = None

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "type_input":
            return self.row.takes_input and not self.console.read_only
        return True

    def action_close(self) -> None:
        typed = self.query_one("#output-input", Input)
        if typed.display:  # Escape leaves the input line first, sending nothing
            self._close_input()
            return
        self.dismiss()

    def action_type_input(self) -> None:
        typed = self.query_one("#output-input", Input)
        typed.display = True
        typed.focus()

    def _close_input(self) -> None:
        typed = self.query_one("#output-input", Input)
        typed.value = ""
        typed.display = False
        self.query_one(OutputLog).focus()

    @on(Input.Submitted, "#output-input")
    async def _send_input(self, event: Input.Submitted) -> None:
        event.stop()
        text = event.value + "\n"
        self._close_input()
        result = await self.row.type_input(text)
        self.notify(result.message, severity="information" if result.ok else "error")

    def action_follow(self) -> None:
        self.query_one(OutputLog).follow_end()
