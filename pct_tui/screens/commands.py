"""The command policy editor: `pct.commands` rules in order, the default, and a preview.

Opened from the Config menu's "Command policy" item. Add, edit, reorder and delete rules,
cycle the default, and type any command line to see what it would get and why — the same
judge `exec_command` uses. Nothing is written until Save.
"""

from __future__ import annotations

from typing import ClassVar

from textual import work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Input, Label, OptionList, Select, Static
from textual.widgets.option_list import Option

from pct_tui.facade import RuntimeFacade
from pct_tui.screens.base import press
from pct_tui.widgets.cells import literal

DECISIONS = ("allow", "ask", "deny")
TRY_PLACEHOLDER = "Type a command line, e.g. bash -c 'git push'"


class CommandRuleScreen(ModalScreen[bool]):
    """One rule: its prefix and its decision. Done validates; Escape discards."""

    CSS_PATH = "commands.tcss"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "discard", "Discard", id="command-rule-discard"),
        Binding("ctrl+s", "done", "Done", id="command-rule-done"),
    ]

    def __init__(self, facade: RuntimeFacade, index: int) -> None:
        super().__init__()
        self.facade = facade
        self.index = index
        self.rule = facade.draft.commands.rules[index]

    def compose(self) -> ComposeResult:
        with Vertical(id="command-rule-page"):
            yield Label(f"Command rule {self.index + 1}", id="command-rule-title")
            with Horizontal(classes="field"):
                yield Label("prefix:", classes="field-label")
                yield Input(
                    self.rule.prefix, id="command-rule-prefix", placeholder="git push", compact=True
                )
            with Horizontal(classes="field"):
                yield Label("decision:", classes="field-label")
                yield Select(
                    [(d, d) for d in DECISIONS],
                    value=self.rule.decision,
                    allow_blank=False,
                    id="command-rule-decision",
                    compact=True,
                )
            yield Static("", id="command-rule-error", markup=False)
            with Horizontal(id="command-rule-buttons"):
                yield Button("Done", variant="primary", id="command-rule-ok", compact=True)

    def on_mount(self) -> None:
        self.query_one("#command-rule-prefix", Input).focus()

    def action_done(self) -> None:
        prefix = self.query_one("#command-rule-prefix", Input).value
        decision = str(self.query_one("#command-rule-decision", Select).value)
        error = self.facade.draft.update_command_rule(self.index, prefix, decision)
        if error is not None:
            self.query_one("#command-rule-error", Static).update(error)
            return
        self.dismiss(True)

    def action_discard(self) -> None:
        self.dismiss(False)

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.action_done()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        self.action_done()


class CommandsScreen(ModalScreen[None]):
    """The rules list, the default, the preview and Save."""

    CSS_PATH = "commands.tcss"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "close", "Close", id="commands-close"),
        Binding("a", "add_rule", "Add", id="command-add"),
        Binding("e", "edit_rule", "Edit", id="command-edit"),
        Binding("delete", "delete_rule", "Delete", id="command-delete"),
        Binding("x", "delete_rule", "Delete", show=False, id="command-delete-x"),
        Binding("ctrl+up", "move_rule(-1)", "Up", id="command-up"),
        Binding("K", "move_rule(-1)", "Up", show=False, id="command-up-k"),
        Binding("ctrl+down", "move_rule(1)", "Down", id="command-down"),
        Binding("J", "move_rule(1)", "Down", show=False, id="command-down-j"),
        Binding("d", "cycle_default", "Default", id="command-default"),
        Binding("ctrl+s", "save", "Save", id="commands-save"),
    ]

    def __init__(self, facade: RuntimeFacade) -> None:
        super().__init__()
        self.facade = facade

    def compose(self) -> ComposeResult:
        with Vertical(id="commands-page"):
            yield Label("Command policy", id="commands-title", classes="section-title")
            yield Static("", id="commands-default", markup=False)
            yield OptionList(id="commands-list")
            with Horizontal(id="commands-buttons"):
                yield Button("Add", id="command-add", compact=True)
                yield Button("Edit", id="command-edit", compact=True)
                yield Button("Delete", id="command-delete", compact=True)
                yield Button("Up", id="command-up", compact=True)
                yield Button("Down", id="command-down", compact=True)
                yield Button("Default", id="command-default", compact=True)
                yield Button("Save", variant="primary", id="commands-save", compact=True)
            yield Label("What would this command get, and why?", classes="section-title")
            yield Input(placeholder=TRY_PLACEHOLDER, id="commands-try", compact=True)
            yield Static("", id="commands-verdict", markup=False)
            yield Static("", id="commands-message", markup=False)

    def on_mount(self) -> None:
        self.refresh_view()
        self.query_one("#commands-list").focus()

    def refresh_view(self) -> None:
        draft = self.facade.draft
        fields = draft.commands
        rules_list = self.query_one("#commands-list", OptionList)
        index = rules_list.highlighted
        rules_list.set_options(
            [
                Option(literal(f"{i + 1}. {rule.decision:<5}  {rule.prefix}"), id=f"command-{i}")
                for i, rule in enumerate(fields.rules)
            ]
        )
        if fields.rules:
            rules_list.highlighted = min(index or 0, len(fields.rules) - 1)
        empty = "  No rules: every command runs." if not fields.rules else ""
        self.query_one("#commands-default", Static).update(
            f"Default (no rule matches): {fields.default}{empty}  "
            "For one command the longest matching prefix decides; the strictest wins."
        )
        title = "Command policy ● modified" if draft.commands_dirty else "Command policy"
        self.query_one("#commands-title", Label).update(title)
        self.query_one("#commands-title").set_class(draft.commands_dirty, "-dirty")
        self._preview()

    def _preview(self) -> None:
        line = self.query_one("#commands-try", Input).value
        verdict = self.query_one("#commands-verdict", Static)
        if not line.strip():
            verdict.update("")
            return
        shown, why = self.facade.command_preview(line)
        verdict.update(f"{shown}\n→ {why}")

    def on_input_changed(self, event: Input.Changed) -> None:
        if event.input.id == "commands-try":
            self._preview()

    def show_message(self, text: str, *, error: bool = False) -> None:
        widget = self.query_one("#commands-message", Static)
        widget.update(text)
        widget.set_class(error, "-error")

    def _index(self) -> int | None:
        if not self.facade.draft.commands.rules:
            return None
        return self.query_one("#commands-list", OptionList).highlighted

    def _select(self, index: int) -> None:
        self.refresh_view()
        rules_list = self.query_one("#commands-list", OptionList)
        if rules_list.option_count:
            rules_list.highlighted = index

    def action_add_rule(self) -> None:
        self._select(self.facade.draft.add_command_rule())
        self.show_message("")
        self.action_edit_rule()

    @work(exclusive=True, group="command-rule-page")
    async def action_edit_rule(self) -> None:
        index = self._index()
        if index is None:
            return
        await self.app.push_screen_wait(CommandRuleScreen(self.facade, index))
        self._select(index)

    def action_delete_rule(self) -> None:
        index = self._index()
        if index is not None:
            self.facade.draft.delete_command_rule(index)
            self._select(max(0, index - 1))

    def action_move_rule(self, delta: int) -> None:
        index = self._index()
        if index is not None:
            self._select(self.facade.draft.move_command_rule(index, delta))

    def action_cycle_default(self) -> None:
        self.facade.draft.cycle_command_default()
        self.refresh_view()

    async def action_save(self) -> None:
        outcome = await self.facade.save()
        self.refresh_view()
        self.show_message(outcome.message, error=not outcome.ok)

    def action_close(self) -> None:
        self.dismiss(None)

    async def on_button_pressed(self, event: Button.Pressed) -> None:
        await press(
            self,
            event,
            {
                "command-add": "add_rule",
                "command-edit": "edit_rule",
                "command-delete": "delete_rule",
                "command-up": "move_rule(-1)",
                "command-down": "move_rule(1)",
                "command-default": "cycle_default",
                "commands-save": "save",
            },
        )

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        self.action_edit_rule()
