"""The command palette: `/pct`, `/pct config`, `/pct status`, `/pct reload` and the screens.

One provider; each command calls the same app action a key binding calls, so there is one
implementation of each.
"""

from __future__ import annotations

from functools import partial

from textual.command import DiscoveryHit, Hit, Hits, Provider

#: (title, action, help)
COMMANDS: tuple[tuple[str, str, str], ...] = (
    ("/pct", "show_mode('config')", "Open the configuration menu"),
    ("/pct config", "show_mode('config')", "Open the configuration menu"),
    ("/pct status", "show_mode('status')", "Show the capability status dashboard"),
    ("/pct reload", "reload", "Re-read the config file and resync every session"),
    ("Execution rules", "show_mode('rules')", "Edit the ordered model rules"),
    ("Sessions", "show_mode('sessions')", "Sessions, shell jobs and code cells"),
    ("Events", "show_mode('events')", "Diagnostics records and debug metadata"),
    ("History", "show_mode('history')", "Journaled tool calls; open one, undo a patch"),
    ("Help", "help", "Key bindings and screens"),
)


class PctCommands(Provider):
    """`/pct …` commands for the palette (ctrl+p)."""

    async def _run(self, action: str) -> None:
        await self.app.run_action(action)

    async def discover(self) -> Hits:
        for title, action, help_text in COMMANDS:
            yield DiscoveryHit(title, partial(self._run, action), help=help_text)

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for title, action, help_text in COMMANDS:
            score = matcher.match(title)
            if score > 0:
                yield Hit(
                    score, matcher.highlight(title), partial(self._run, action), help=help_text
                )
