"""One rule's page: `id:`, `match:`, `Patch:`, `direct Shell:`, `Code:`, `Done`.

Done validates (a duplicate id is refused with the spec's message and the page stays);
Escape discards the page.
"""

from __future__ import annotations

from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Checkbox, Input, Label, Static

from pct_tui.state.drafts import ConfigDraft
from pct_tui.widgets.glyphs import GlyphCheckbox


class RuleEditScreen(ModalScreen[bool]):
    CSS_PATH = "rule_edit.tcss"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "discard", "Discard", id="rule-page-discard"),
        Binding("ctrl+s", "done", "Done", id="rule-page-done"),
    ]

    def __init__(self, draft: ConfigDraft, index: int) -> None:
        super().__init__()
        self.draft = draft
        self.index = index
        self.rule = draft.rules[index]

    def compose(self) -> ComposeResult:
        rule = self.rule
        with Vertical(id="rule-page"):
            yield Label(f"Rule {self.index + 1}", id="rule-page-title")
            with Horizontal(classes="field"):
                yield Label("id:", classes="field-label")
                yield Input(rule.id, id="rule-id", compact=True)
            with Horizontal(classes="field"):
                yield Label("match:", classes="field-label")
                yield Input(
                    rule.match, id="rule-match", placeholder="gpt-5* or openai/*", compact=True
                )
            yield GlyphCheckbox("Patch:", rule.patch, id="rule-patch", compact=True)
            yield GlyphCheckbox("direct Shell:", rule.shell, id="rule-shell", compact=True)
            yield GlyphCheckbox("Code:", rule.code, id="rule-code", compact=True)
            yield Static("", id="rule-error", markup=False)
            with Horizontal(id="rule-buttons"):
                yield Button("Done", variant="primary", id="rule-done", compact=True)

    def on_mount(self) -> None:
        self.query_one("#rule-id", Input).focus()

    def has_pending_edits(self) -> bool:
        """A field differs from the rule in the draft (Done has not taken it yet)."""
        rule = self.rule
        return (
            self.query_one("#rule-id", Input).value != rule.id
            or self.query_one("#rule-match", Input).value != rule.match
            or self.query_one("#rule-patch", Checkbox).value != rule.patch
            or self.query_one("#rule-shell", Checkbox).value != rule.shell
            or self.query_one("#rule-code", Checkbox).value != rule.code
        )

    def on_input_changed(self, _: Input.Changed) -> None:
        self._mark()

    def on_checkbox_changed(self, _: Checkbox.Changed) -> None:
        self._mark()

    def _mark(self) -> None:
        title = f"Rule {self.index + 1}"
        if self.is_mounted and self.has_pending_edits():
            title += " ● modified (ctrl+s: Done)"
        self.query_one("#rule-page-title", Label).update(title)

    def take_pending_edits(self) -> bool:
        """Quit's Save: take the page's fields into the draft; False (error shown) if invalid."""
        return not self.has_pending_edits() or self._take() is None

    def _take(self) -> str | None:
        error = self.draft.update_rule(
            self.index,
            rule_id=self.query_one("#rule-id", Input).value,
            match=self.query_one("#rule-match", Input).value,
            patch=self.query_one("#rule-patch", Checkbox).value,
            shell=self.query_one("#rule-shell", Checkbox).value,
            code=self.query_one("#rule-code", Checkbox).value,
        )
        if error is not None:
            self.query_one("#rule-error", Static).update(error)
        return error

    def action_done(self) -> None:
        if self._take() is None:
            self.dismiss(True)

    def action_discard(self) -> None:
        self.dismiss(False)

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.action_done()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        self.action_done()
