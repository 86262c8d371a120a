"""Quitting with an unsaved draft: Save, Discard or Cancel — never a silent loss."""

from __future__ import annotations

from typing import ClassVar, Literal

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Label, Static

QuitAnswer = Literal["save", "discard", "cancel"]


class QuitScreen(ModalScreen[QuitAnswer]):
    CSS_PATH = "approval.tcss"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("s", "answer('save')", "Save", id="quit-save"),
        Binding("d", "answer('discard')", "Discard", id="quit-discard"),
        Binding("escape,c", "answer('cancel')", "Cancel", id="quit-cancel"),
    ]

    def __init__(self, what: str) -> None:
        super().__init__()
        self.what = what

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog"):
            yield Label("Quit with unsaved changes?", id="question-title")
            yield Static(
                f"{self.what} Save writes it and quits; Discard quits without it; Cancel stays.",
                id="question-message",
                markup=False,
            )
            with Horizontal(id="buttons"):
                yield Button("Save (s)", variant="success", id="save", compact=True)
                yield Button("Discard (d)", variant="error", id="discard", compact=True)
                yield Button("Cancel (esc)", id="cancel", compact=True)

    def on_mount(self) -> None:
        self.query_one("#cancel", Button).focus()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        self.action_answer(event.button.id or "cancel")

    def action_answer(self, answer: str) -> None:
        self.dismiss(answer if answer in ("save", "discard") else "cancel")  # type: ignore[arg-type]
