"""The frame every console screen shares: header, changed-on-disk banner, body, footer.

A screen reads and acts through the `RuntimeFacade` it is built with and asks the app for
navigation or a reload by posting a message (as Textual's own widgets do), so no screen
imports the app.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import ClassVar

from textual import events
from textual.app import ComposeResult
from textual.message import Message
from textual.screen import Screen
from textual.widget import Widget
from textual.widgets import Button, Footer, Header

from pct_tui.console import Console
from pct_tui.facade import RuntimeFacade
from pct_tui.remote import READ_ONLY
from pct_tui.widgets.banner import DiskBanner
from pct_tui.widgets.navbar import NavBar


class PctScreen(Screen[None]):
    """Subclasses implement `compose_body()` and `refresh_view()`."""

    class ModeRequested(Message):
        """Show another mode (screen) of the app."""

        def __init__(self, mode: str) -> None:
            super().__init__()
            self.mode = mode

    class ReloadRequested(Message):
        """Re-read the config file and resync every session (`/pct reload`)."""

    #: The app mode this screen is (for the navigation bar).
    MODE: ClassVar[str] = ""
    #: Actions that change settings or work, each with what a monitor does not do: a
    #: monitor hides their keys, so its footer offers only what it can do, and says why
    #: when one is pressed anyway.
    ACTS: ClassVar[dict[str, str]] = {}

    def __init__(self, facade: RuntimeFacade) -> None:
        super().__init__()
        self.facade = facade

    @property
    def console(self) -> Console:
        return self.facade.console

    def compose(self) -> ComposeResult:
        yield Header()
        yield NavBar(self.MODE)
        yield DiskBanner()
        yield from self.compose_body()
        # The palette key is on the navigation bar: the footer's room is for this screen.
        yield Footer(compact=True, show_command_palette=False)

    def compose_body(self) -> ComposeResult:
        yield from ()

    def message_is_stale(self, shown_at: int) -> bool:
        """A side-panel message shown at `shown_at` (a count of saves and reloads) speaks
        of an earlier one once another save or reload happened."""
        return shown_at != self.console.config_acts

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        return not (action in self.ACTS and self.facade.read_only)

    def on_key(self, event: events.Key) -> None:
        if not self.facade.read_only:
            return
        for binding in self._bindings.key_to_bindings.get(event.key, []):
            action = binding.action.partition("(")[0]
            if action in self.ACTS:
                event.stop()
                self.refuse(action)
                return

    def refuse(self, action: str) -> None:
        """A monitor's answer to a hidden key: what it does not do."""
        self.notify(f"{READ_ONLY}: it does not {self.ACTS[action]}.", severity="warning")

    def on_mount(self) -> None:
        console = self.console
        console.disk_signal.subscribe(self, self._on_disk)
        console.status_changed.subscribe(self, self._on_status)
        self._on_disk(console.disk_changed)
        self.refresh_view()

    def on_screen_resume(self) -> None:
        self._on_disk(self.console.disk_changed)
        self.refresh_view()

    def _on_disk(self, changed: bool) -> None:
        self.query_one(DiskBanner).set_class(changed, "-visible")

    def _on_status(self, _: None) -> None:
        if self.is_current:
            self.refresh_view()

    def refresh_view(self) -> None:
        """Redraw from the console's current state."""

    def on_disk_banner_reload_requested(self, event: DiskBanner.ReloadRequested) -> None:
        event.stop()
        self.post_message(self.ReloadRequested())

    def on_disk_banner_dismissed(self, _: DiskBanner.Dismissed) -> None:
        self.console.set_disk_changed(False)


async def press(screen: Widget, event: Button.Pressed, actions: Mapping[str, str]) -> None:
    """A button stands for a key's action: run the action its id names (an editor's row of
    buttons and its keys then do one thing each)."""
    event.stop()
    action = actions.get(event.button.id or "")
    if action:
        await screen.run_action(action)
