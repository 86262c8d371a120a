"""pct-tui: the Textual console of the Pi Codex Toolkit runtime.

For now it shows where the configuration lives and whether it loaded; the status, config,
rules, sessions and approval screens are assembled here as they arrive. Keep this module a
thin assembly of screens.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import ClassVar

from textual.app import App, ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.widgets import Footer, Header, Static

from pct_runtime.config import ConfigRead, ConfigStore, reload_message
from pct_runtime.config.paths import config_path


def describe_read(result: ConfigRead) -> str:
    """One line for the console: loaded, or the same error text `/pct reload` prints."""
    if result.error is None:
        if result.revision == "missing":
            return "Configuration loaded (no file yet: all-off defaults)."
        return "Configuration loaded."
    return reload_message(result.error, result.has_last_known_good)


class PctApp(App[None]):
    """The console. `path` defaults to the global config path (PI_CODING_AGENT_DIR aware)."""

    TITLE = "Pi Codex Toolkit"
    CSS = """
    #overview { padding: 1 2; height: auto; }
    #config-path { margin-bottom: 1; }
    #config-status.error { color: $error; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("q", "quit", "Quit", id="quit"),
        Binding("ctrl+q", "quit", "Quit", show=False, priority=True, id="quit-ctrl"),
    ]

    def __init__(self, path: Path | None = None) -> None:
        super().__init__()
        self.config_path = path if path is not None else config_path()
        self.store = ConfigStore(self.config_path)

    def compose(self) -> ComposeResult:
        yield Header()
        with Vertical(id="overview"):
            yield Static(f"Config: {self.config_path}", id="config-path", markup=False)
            yield Static("Reading configuration…", id="config-status", markup=False)
        yield Footer()

    async def on_mount(self) -> None:
        result = await asyncio.to_thread(self.store.read)
        status = self.query_one("#config-status", Static)
        status.update(describe_read(result))
        status.set_class(result.error is not None, "error")


def main() -> None:
    PctApp().run()


if __name__ == "__main__":  # pragma: no cover
    main()
