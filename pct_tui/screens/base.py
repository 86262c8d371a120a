"""The frame every console screen shares: header, changed-on-disk banner, body, footer."""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar, cast

from textual.app import ComposeResult
from textual.screen import Screen
from textual.widgets import Footer, Header

from pct_tui.widgets.banner import DiskBanner
from pct_tui.widgets.navbar import NavBar

if TYPE_CHECKING:
    from pct_tui.app import PctApp
    from pct_tui.console import Console


class PctScreen(Screen[None]):
    """Subclasses implement `compose_body()` and `refresh_view()`."""

    @property
    def pct(self) -> PctApp:
        return cast("PctApp", self.app)

    @property
    def console(self) -> Console:
        return self.pct.console_state

    #: The app mode this screen is (for the navigation bar).
    MODE: ClassVar[str] = ""

    def compose(self) -> ComposeResult:
        yield Header()
        yield NavBar(self.MODE)
        yield DiskBanner()
        yield from self.compose_body()
        # The palette key is on the navigation bar: the footer's room is for this screen.
        yield Footer(compact=True, show_command_palette=False)

    def compose_body(self) -> ComposeResult:
        yield from ()

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

    async def on_disk_banner_reload_requested(self, _: DiskBanner.ReloadRequested) -> None:
        await self.pct.run_action("reload")

    def on_disk_banner_dismissed(self, _: DiskBanner.Dismissed) -> None:
        self.console.set_disk_changed(False)
