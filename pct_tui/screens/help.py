"""Help: the screens, the key bindings (with their ids, for keymaps) and the commands."""

from __future__ import annotations

from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

HELP_TEXT = """\
Pi Codex Toolkit console          esc, q or ? closes this page

Screens (number keys, or click the bar under the title)
  1  Status    configured / effective / reason; how to attach an agent;
               c Copy the attach commands (OSC 52)
  2  Config    the /pct config menu: Enter flips or picks; ^s Save
               (a Config or Rules save reloads every runtime shown)
  3  Rules     execution rules: a Add, e Edit (or Enter),
               del Delete (or x), ^↑ Up / ^↓ Down (or K / J), ^s Save
  4  Sessions  shell jobs and code cells: v View output (or Enter),
               x Stop, T End session; every runtime of the agent dir
               (agents' pct serve too) under its own header
               In the viewer scrolling up pauses following; f or End
               follows again; i types into a running shell job's
               stdin (a password prompt): hidden, Enter sends it with
               a newline, esc cancels; the model and the journal see
               only how many bytes were typed
  5  Events    runtime events, approvals and answers, diagnostics
  6  History   journaled calls, newest first: / Filter, c Clear,
               Enter opens a call (esc Back), u Undo a patch;
               Tab reaches the session, tool and outcome filters

Everywhere
  ^p palette   /pct, /pct config, /pct status, /pct reload, the screens
  ^r Reload    every runtime shown re-reads the config file, as
               pct reload; each one's answer is shown
  ? Help       this page (esc, q or ? closes it)
  q Quit       also ctrl+c, ctrl+q; an unsaved draft asks
               Save / Discard / Cancel
  ● modified   a Config or Rules title with this mark is not saved

Approvals
  y Yes   n No (or Escape)   one at a time; the rest wait in order
  Other runtimes ask here too while this console runs; the modal says
  which runtime, session and client asks. Start pct-tui before the
  agent: a question is never held for a console to connect.
  pct-tui --monitor: questions are shown read-only (esc Hide) and close
  when answered elsewhere; keys that change something (x, T, ^s, u,
  the rule keys, i) are not offered and say why when pressed

Colours: active green · deferred blue · unavailable amber · off grey ·
errors red. Check boxes show X when on.
Binding ids (for keymaps):
  show-status show-config show-rules show-sessions show-events
  show-history reload help quit quit-ctrl quit-ctrl-c config-save
  rule-add rule-edit rule-delete rule-delete-x rule-up rule-up-k
  rule-down rule-down-j rules-save work-view work-view-enter work-stop
  session-end approval-yes approval-no quit-save quit-discard
  quit-cancel history-filter history-clear history-open history-undo
  history-to-list call-back call-back-q call-undo watch-hide status-copy
  output-back output-follow output-type help-close
"""

#: The first lines when this console is `--monitor`.
MONITOR_TEXT = """\
This console is read-only (--monitor): it watches every runtime, serves
no MCP, saves nothing, stops nothing and answers no approval.

"""


class HelpScreen(ModalScreen[None]):
    CSS_PATH = "help.tcss"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,q,question_mark", "close", "Close", id="help-close"),
    ]

    def __init__(self, *, monitor: bool = False) -> None:
        super().__init__()
        self.monitor = monitor

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="help-dialog"):
            yield Static((MONITOR_TEXT if self.monitor else "") + HELP_TEXT, markup=False)

    def action_close(self) -> None:
        self.dismiss()
