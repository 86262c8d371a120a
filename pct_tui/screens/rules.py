"""The execution rules editor: ordered model globs with Patch / direct Shell / Code switches.

Add, edit, delete and move by keys or by the buttons; the preview shows which rule the
current model matches and the routes it would get. Opening it on a legacy file previews
the migration with the spec's notice. Nothing is written until Save.
"""

from __future__ import annotations

from typing import ClassVar

from textual import work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.widgets import Button, Label, OptionList, Static
from textual.widgets.option_list import Option

from pct_tui.facade import NO_MODEL_LINE, Model
from pct_tui.screens.base import PctScreen, press
from pct_tui.screens.rule_edit import RuleEditScreen
from pct_tui.state.drafts import rule_label
from pct_tui.widgets.cells import literal
from pct_tui.widgets.fit_text import FitText

MONITOR_NOTICE = "Monitor (read-only): the rules in use, shown and not edited here."


class RulesScreen(PctScreen):
    MODE = "rules"
    CSS_PATH = "rules.tcss"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("a", "add_rule", "Add", id="rule-add"),
        Binding("e", "edit_rule", "Edit", id="rule-edit"),
        Binding("delete", "delete_rule", "Delete", id="rule-delete"),
        Binding("x", "delete_rule", "Delete", show=False, id="rule-delete-x"),
        Binding("ctrl+up", "move_rule(-1)", "Up", id="rule-up"),
        Binding("K", "move_rule(-1)", "Up", show=False, id="rule-up-k"),
        Binding("ctrl+down", "move_rule(1)", "Down", id="rule-down"),
        Binding("J", "move_rule(1)", "Down", show=False, id="rule-down-j"),
        Binding("ctrl+s", "save", "Save", id="rules-save"),
    ]
    ACTS: ClassVar[dict[str, str]] = dict.fromkeys(
        ("add_rule", "edit_rule", "delete_rule", "move_rule", "save"), "edit the rules"
    )

    #: `config_acts` when the side-panel message was shown (None: no message).
    _message_at: int | None = None

    def compose_body(self) -> ComposeResult:
        with Horizontal(id="rules-body"):
            with Vertical(id="rules-left"):
                yield Label("Execution rules", id="rules-title", classes="section-title")
                yield OptionList(id="rules-list")
                with Horizontal(id="rules-buttons"):
                    yield Button("Add", id="rule-add", compact=True)
                    yield Button("Edit", id="rule-edit", compact=True)
                    yield Button("Delete", id="rule-delete", compact=True)
                    yield Button("Up", id="rule-up", compact=True)
                    yield Button("Down", id="rule-down", compact=True)
                    yield Button("Save", variant="primary", id="rules-save", compact=True)
                yield Static("", id="rules-notice", markup=False)
                yield Static("", id="rules-message", markup=False)
            with VerticalScroll(id="rules-right"):
                yield Label("Preview: current model", classes="section-title")
                yield FitText("", id="rules-preview")

    def on_screen_resume(self) -> None:
        self.console.draft.open_rules()
        super().on_screen_resume()

    def on_mount(self) -> None:
        self.console.draft.open_rules()
        # A monitor edits nothing: no buttons that would only be refused.
        self.query_one("#rules-buttons").display = not self.facade.read_only
        super().on_mount()
        self.query_one("#rules-list").focus()

    def refresh_view(self) -> None:
        self._clear_stale_message()
        draft = self.console.draft
        if draft.config.execution is None:  # a reset (Cancel, reload) of a legacy draft
            draft.open_rules()
        rules_list = self.query_one("#rules-list", OptionList)
        index = rules_list.highlighted
        rules = draft.rules
        rules_list.set_options(
            [Option(literal(rule_label(i, rule)), id=f"rule-{i}") for i, rule in enumerate(rules)]
        )
        if rules:
            rules_list.highlighted = min(index or 0, len(rules) - 1)
        empty = "No rules: the native baseline (Pi's own tools only)." if not rules else ""
        # A monitor saves nothing, so the notice of what Save would store is not shown.
        notice = MONITOR_NOTICE if self.facade.read_only else draft.rules_notice()
        parts = (notice, empty, *draft.unreachable_notes())
        self.query_one("#rules-notice", Static).update("\n".join(p for p in parts if p))
        title = (
            "Execution rules ● modified" if draft.dirty else "Execution rules (first match wins)"
        )
        self.query_one("#rules-title", Label).update(title)
        self.query_one("#rules-title").set_class(draft.dirty, "-dirty")
        self.query_one("#rules-preview", FitText).set_text(self.preview_text())

    def current_model(self) -> Model | None:
        return self.facade.current_model()

    def preview_text(self) -> str:
        draft = self.console.draft
        model = self.current_model()
        lines = [f"Current model: {model.key if model else '—'}"]
        if model is None and draft.rules:
            lines.append(NO_MODEL_LINE)
        rule = draft.matching_rule(model.id, model.provider) if model else None
        if rule is None:
            lines.append("Matching rule: none (nothing requested; Pi's native tools stay)")
        else:
            index = draft.rules.index(rule)
            lines.append(f"Matching rule: {rule_label(index, rule)}")
        plan = self.facade.draft_plan(model)
        lines.append("")
        lines.extend(self.facade.execution_block(plan).split("\n"))
        return "\n".join(lines)

    def show_message(self, text: str, *, error: bool = False) -> None:
        widget = self.query_one("#rules-message", Static)
        widget.update(text)
        widget.set_class(error, "-error")
        self._message_at = self.console.config_acts

    def _clear_stale_message(self) -> None:
        if self._message_at is not None and self.message_is_stale(self._message_at):
            self._message_at = None
            self.show_message("")
            self._message_at = None

    def _index(self) -> int | None:
        rules_list = self.query_one("#rules-list", OptionList)
        if not self.console.draft.rules:
            return None
        return rules_list.highlighted

    def _select(self, index: int) -> None:
        self.refresh_view()
        rules_list = self.query_one("#rules-list", OptionList)
        if rules_list.option_count:
            rules_list.highlighted = index

    def action_add_rule(self) -> None:
        index = self.console.draft.add_rule()
        self._select(index)
        self.show_message("")
        self.action_edit_rule()

    @work(exclusive=True, group="rule-page")
    async def action_edit_rule(self) -> None:
        index = self._index()
        if index is None:
            return
        draft = self.console.draft
        await self.app.push_screen_wait(RuleEditScreen(draft, index))
        self._select(index)

    def action_delete_rule(self) -> None:
        index = self._index()
        if index is None:
            return
        self.console.draft.delete_rule(index)
        self._select(max(0, index - 1))

    def action_move_rule(self, delta: int) -> None:
        index = self._index()
        if index is None:
            return
        self._select(self.console.draft.move_rule(index, delta))

    async def action_save(self) -> None:
        outcome = await self.facade.save()
        self.refresh_view()
        self.show_message(outcome.message, error=not outcome.ok)

    async def on_button_pressed(self, event: Button.Pressed) -> None:
        await press(
            self,
            event,
            {
                "rule-add": "add_rule",
                "rule-edit": "edit_rule",
                "rule-delete": "delete_rule",
                "rule-up": "move_rule(-1)",
                "rule-down": "move_rule(1)",
                "rules-save": "save",
            },
        )

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        self.action_edit_rule()
