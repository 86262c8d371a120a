"""The changed-on-disk banner: offers a reload, never reloads by itself."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.containers import Horizontal
from textual.message import Message
from textual.widgets import Button, Label


class DiskBanner(Horizontal):
    """Shown (class `-visible`) while the config file differs from what the runtime uses."""

    DEFAULT_CSS = """
    DiskBanner {
        display: none;
        height: auto;
        background: $warning 30%;
        padding: 0 1;
    }
    DiskBanner.-visible { display: block; }
    DiskBanner Label { width: 1fr; padding: 1 0; }
    DiskBanner Button { margin-left: 1; min-width: 12; }
    """

    class ReloadRequested(Message):
        pass

    class Dismissed(Message):
        """Keep the settings in use: hidden on every screen until the next change."""

    def compose(self) -> ComposeResult:
        yield Label(
            "The config file changed on disk. Reload to use it (ctrl+r), or keep the "
            "settings in use.",
            id="banner-text",
        )
        yield Button("Reload", variant="warning", id="banner-reload")
        yield Button("Dismiss", id="banner-dismiss")

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        if event.button.id == "banner-reload":
            self.post_message(self.ReloadRequested())
        else:
            self.post_message(self.Dismissed())
        self.set_class(False, "-visible")
