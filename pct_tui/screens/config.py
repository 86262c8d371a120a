"""The `/pct config` menu: every item of the spec's list, same labels, same semantics.

Enter (or a click) flips a switch, cycles a choice, or opens a picker. Nothing is written
until Save, which uses the store's revision check: a refused save (`stale-revision`,
`lock-held`, …) is shown and the draft is kept.
"""

from __future__ import annotations

from typing import ClassVar

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.widgets import Label, OptionList, Static
from textual.widgets.option_list import Option

from pct_tui.facade import NO_MODEL_LINE
from pct_tui.screens.approval import ChoiceScreen
from pct_tui.screens.base import PctScreen
from pct_tui.screens.commands import CommandsScreen
from pct_tui.screens.deferred import DeferredScreen
from pct_tui.state.drafts import CORE_TITLES, MENU_CAPABILITY, MENU_HELP

CORE_CAPABILITIES = frozenset(CORE_TITLES)
MONITOR_STATE = "Monitor (read-only): the settings in use, shown and not changed here."
VALUE_STYLES = {"on": "bold green", "off": "grey62", "Confirm": "cyan", "Always": "bold yellow"}
EFFECTIVE_STYLES = {
    "active": "bold green",
    "deferred": "bold dodger_blue1",
    "unavailable": "bold dark_orange",
    "off": "grey62",
}


def styled_label(label: str) -> Text:
    """The exact menu label, with its value coloured (on green, off grey, …)."""
    if label in ("Save", "Cancel"):
        return Text(label, style="bold" if label == "Save" else "")
    head, sep, value = label.rpartition(": ")
    if not sep:
        return Text(label)
    text = Text(head + sep)
    text.append(value, style=VALUE_STYLES.get(value, "bold"))
    return text


class ConfigScreen(PctScreen):
    MODE = "config"
    CSS_PATH = "config.tcss"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("ctrl+s", "save", "Save", id="config-save"),
    ]
    ACTS: ClassVar[dict[str, str]] = {"save": "save the configuration"}

    #: `config_acts` when the side-panel message was shown (None: no message).
    _message_at: int | None = None

    def compose_body(self) -> ComposeResult:
        with Horizontal(id="config-body"):
            with Vertical(id="config-left"):
                yield Label("Configuration", id="config-title", classes="section-title")
                yield OptionList(id="config-menu")
            with Vertical(id="config-right"):
                yield Static("", id="config-help", markup=False)
                yield Static("", id="config-effect")
                yield Static("", id="config-draft", markup=False)
                yield Static("", id="config-load", markup=False)
                yield Static("", id="config-message", markup=False)

    def on_mount(self) -> None:
        super().on_mount()
        self.query_one("#config-menu").focus()

    def refresh_view(self) -> None:
        self._clear_stale_message()
        menu = self.query_one("#config-menu", OptionList)
        highlighted = menu.highlighted
        items = self.console.draft.menu()
        if self.facade.read_only:  # a monitor saves nothing: no Save or Cancel to offer
            items = [item for item in items if item.key not in ("save", "cancel")]
        menu.set_options([Option(styled_label(item.label), id=item.key) for item in items])
        menu.highlighted = highlighted if highlighted is not None else 0
        option = menu.get_option_at_index(menu.highlighted)
        self._effect(option.id or "")
        draft = self.console.draft
        state = "Draft has unsaved changes." if draft.dirty else "No unsaved changes."
        if self.facade.read_only:
            state = MONITOR_STATE
        self.query_one("#config-draft", Static).update(state)
        self.query_one("#config-draft").set_class(draft.dirty, "-dirty")
        # A file that does not load is said here before a save would be refused for it.
        load = self.query_one("#config-load", Static)
        load.update(self.facade.load_message if self.facade.load_error else "")
        load.display = self.facade.load_error
        self.query_one("#config-title", Label).update(
            "Configuration ● modified (ctrl+s saves)" if draft.dirty else "Configuration"
        )
        self.query_one("#config-title").set_class(draft.dirty, "-dirty")

    def show_message(self, text: str, *, error: bool = False) -> None:
        widget = self.query_one("#config-message", Static)
        widget.update(text)
        widget.set_class(error, "-error")
        self._message_at = self.console.config_acts

    def _clear_stale_message(self) -> None:
        if self._message_at is not None and self.message_is_stale(self._message_at):
            self._message_at = None
            self.show_message("")
            self._message_at = None

    def on_option_list_option_highlighted(self, event: OptionList.OptionHighlighted) -> None:
        self.query_one("#config-help", Static).update(MENU_HELP.get(event.option.id or "", ""))
        self._effect(event.option.id or "")

    def _effect(self, key: str) -> None:
        """What a new session would get with the draft, for the highlighted capability."""
        widget = self.query_one("#config-effect", Static)
        capability = MENU_CAPABILITY.get(key)
        if capability is None or not self.console.ready:
            widget.update("")
            return
        plan = self.facade.draft_plan()
        decision = plan.decisions[capability]
        text = Text("With this draft a new session gets: ")
        text.append(decision.effective, style=EFFECTIVE_STYLES.get(decision.effective, "bold"))
        if decision.reason:
            text.append(f" ({decision.reason})", style="dark_orange")
        if plan.rules_managed and plan.model is None and capability in CORE_CAPABILITIES:
            text.append("\n" + NO_MODEL_LINE, style="dark_orange")
        widget.update(text)

    async def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        key = event.option.id or ""
        await self.activate(key)

    async def activate(self, key: str) -> None:
        draft = self.console.draft
        if self.facade.read_only and key not in ("rules", *CORE_TITLES):
            self.show_message(MONITOR_STATE)
            return
        if draft.toggle(key):
            self.refresh_view()
        elif key == "executor":
            self.pick_executor()
        elif key == "effort":
            self.pick_effort()
        elif key == "deferred":
            self.edit_deferred()
        elif key == "commands":
            self.edit_commands()
        elif key == "rules" or key in CORE_TITLES:
            self.post_message(self.ModeRequested("rules"))
        elif key == "save":
            await self.action_save()
        elif key == "cancel":
            self.console.reset_draft()
            self.refresh_view()
            self.show_message("Draft discarded; showing the settings in use.")

    @work(exclusive=True, group="config-picker")
    async def edit_commands(self) -> None:
        await self.app.push_screen_wait(CommandsScreen(self.facade))
        self.refresh_view()

    @work(exclusive=True, group="config-picker")
    async def pick_executor(self) -> None:
        candidates = await self.facade.sidecar_candidates()
        note = (
            ""
            if candidates
            else "No available model passes the official-route check (add OpenAI or Codex "
            "credentials to Pi's auth.json)."
        )
        current = self.console.draft.sidecar_model()
        current_key = f"{current.provider}/{current.model}" if current else "none"
        choice = await self.app.push_screen_wait(
            ChoiceScreen(
                "Web Search executor", ["none", *candidates], current=current_key, note=note
            )
        )
        if choice is None:
            return
        if choice == "none":
            self.console.draft.set_executor(None, None)
        else:
            provider, _, model_id = choice.partition("/")
            self.console.draft.set_executor(provider, model_id)
        self.refresh_view()

    @work(exclusive=True, group="config-picker")
    async def pick_effort(self) -> None:
        current = self.console.draft.sidecar_model()
        if current is None:
            self.show_message("Pick a Web Search executor first.", error=True)
            return
        levels = self.facade.sidecar_efforts(current)
        choice = await self.app.push_screen_wait(
            ChoiceScreen("Web Search executor effort", levels, current=current.thinking_level)
        )
        if choice is not None:
            self.console.draft.set_effort(choice)
            self.refresh_view()

    @work(exclusive=True, group="config-picker")
    async def edit_deferred(self) -> None:
        names = await self.app.push_screen_wait(
            DeferredScreen(self.console.draft.deferred(), self.console.draft)
        )
        if names is not None:
            self.refresh_view()

    async def action_save(self) -> None:
        outcome = await self.facade.save()
        self.refresh_view()
        self.show_message(outcome.message, error=not outcome.ok)
