"""The screen switcher under the header: `1 Status  2 Config …`, the current one marked.

The number keys are listed here instead of in the footer, so at 80 columns the footer
keeps room for each screen's own keys and for Help and Quit.
"""

from __future__ import annotations

from textual.content import Content
from textual.widgets import Static

SCREENS: tuple[tuple[str, str, str], ...] = (
    ("1", "status", "Status"),
    ("2", "config", "Config"),
    ("3", "rules", "Rules"),
    ("4", "sessions", "Sessions"),
    ("5", "events", "Events"),
    ("6", "history", "History"),
)


def nav_content(current: str) -> Content:
    """Each screen as a clickable label; the current one reversed (not only coloured)."""
    parts = []
    for key, mode, title in SCREENS:
        style = "reverse bold " if mode == current else ""
        parts.append(f"[{style}@click=app.show_mode('{mode}')] {key} {title} [/]")
    parts.append("[@click=app.command_palette] ^p palette [/]")
    return Content.from_markup(" ".join(parts))


class NavBar(Static):
    DEFAULT_CSS = """
    NavBar { height: 1; background: $panel; color: $text-muted; }
    """

    def __init__(self, current: str) -> None:
        super().__init__(nav_content(current))
