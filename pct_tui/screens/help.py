"""Help: the screens, the key bindings (with their ids, for keymaps) and the commands."""

from __future__ import annotations

from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

HELP_TEXT = """\
Pi Codex Toolkit console

Screens
  1  Status     capabilities: configured / effective / reason, how to attach an agent
  2  Config     the /pct config menu (Enter flips or picks; ctrl+s saves)
  3  Rules      execution rules: a add, e/Enter edit, x/Delete delete,
                ctrl+up / ctrl+down (or K / J) move, ctrl+s save
  4  Sessions   sessions, shell jobs, code cells: Enter view output, x stop, T end session
  5  Events     runtime events, diagnostics records, debug metadata

Everywhere
  ctrl+p   command palette: /pct, /pct config, /pct status, /pct reload
  ctrl+r   reload the config file (/pct reload)
  ?        this help          q  quit

Approvals
  y  Yes     n / Escape  No      (one prompt at a time; the rest wait in order)

Colours: active green · deferred blue · unavailable amber · off grey · errors red.
Binding ids (for keymaps): show-status show-config show-rules show-sessions show-events
  reload help quit config-save rule-add rule-edit rule-delete rule-up rule-down rules-save
  work-view work-stop session-end approval-yes approval-no
"""


class HelpScreen(ModalScreen[None]):
    CSS_PATH = "help.tcss"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,q,question_mark", "close", "Close", id="help-close"),
    ]

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="help-dialog"):
            yield Static(HELP_TEXT, markup=False)

    def action_close(self) -> None:
        self.dismiss()
