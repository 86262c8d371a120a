"""Editing the deferred tools list: Toolkit tool names only; Computer Use all six or none."""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Label, SelectionList, Static

from pct_tui.facade import DEFERRABLE_TOOL_NAMES
from pct_tui.state.drafts import ConfigDraft
from pct_tui.widgets.glyphs import GlyphSelectionList


class DeferredScreen(ModalScreen[tuple[str, ...] | None]):
    """Space toggles a name; Apply validates (the draft changes only when valid)."""

    CSS_PATH = "approval.tcss"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "back", "Back", id="deferred-back"),
        Binding("ctrl+s", "apply", "Apply", id="deferred-apply"),
    ]

    def __init__(self, current: Sequence[str], draft: ConfigDraft) -> None:
        super().__init__()
        self.current = tuple(current)
        self.draft = draft

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog"):
            yield Label("Tool Discovery: deferred tools", id="question-title")
            yield GlyphSelectionList(
                *((name, name, name in self.current) for name in DEFERRABLE_TOOL_NAMES),
                id="deferred-list",
            )
            yield Static("", id="deferred-error", markup=False)
            with Horizontal(id="buttons"):
                yield Button("Apply", variant="primary", id="apply", compact=True)
                yield Button("Back", id="back", compact=True)

    def on_mount(self) -> None:
        self.query_one("#deferred-list").focus()

    def has_pending_edits(self) -> bool:
        """The ticks differ from the draft's list (Apply has not taken them yet)."""
        chosen = set(self.query_one("#deferred-list", SelectionList).selected)
        return chosen != set(self.current)

    def on_selection_list_selected_changed(self, _: SelectionList.SelectedChanged[str]) -> None:
        title = "Tool Discovery: deferred tools"
        if self.has_pending_edits():
            title += " ● modified (ctrl+s applies)"
        self.query_one("#question-title", Label).update(title)

    def take_pending_edits(self) -> bool:
        """Quit's Save: take the ticks into the draft; False (error shown) if invalid."""
        if not self.has_pending_edits():
            return True
        chosen = tuple(self.query_one("#deferred-list", SelectionList).selected)
        error = self.draft.set_deferred(chosen)
        if error is not None:
            self.query_one("#deferred-error", Static).update(error)
        return error is None

    def action_apply(self) -> None:
        chosen = tuple(self.query_one("#deferred-list", SelectionList).selected)
        error = self.draft.set_deferred(chosen)
        if error is not None:
            self.query_one("#deferred-error", Static).update(error)
            return
        self.dismiss(tuple(self.draft.deferred()))

    def action_back(self) -> None:
        self.dismiss(None)

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        if event.button.id == "apply":
            self.action_apply()
        else:
            self.action_back()
