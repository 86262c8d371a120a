"""Modal questions: approvals (nested apply_patch, Computer Use access), confirmations and
pickers. Each is dismissed with its answer; the caller's callback resolves the request."""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Button, Label, OptionList, Static
from textual.widgets.option_list import Option

from pct_runtime.output.terminal_text import visible
from pct_tui.widgets.cells import literal
from pct_tui.widgets.patch_view import FileDiff, diff_text, patch_text, split_preview

HINTS = {
    "Code Mode: apply patch?": "Yes applies this one nested patch; No changes nothing and the "
    "cell is told you declined. Code Mode nested Apply Patch confirmation: Always (Config) "
    "skips only this question.",
    "Computer Use access": "Yes remembers this app for this client until it resets; No refuses "
    "only this call (it will ask again). Computer Use approval: Always (Config) accepts every "
    "valid request without asking.",
}


def question_body(message: str, diffs: Sequence[FileDiff] | None) -> ComposeResult:
    """A question's text: a patch as its files plus a coloured diff, else the message."""
    if diffs:
        files, _ = split_preview(message)
        if files:
            yield Static(visible("\n".join(files), lines=True), id="patch-files", markup=False)
        yield Static(diff_text(diffs), id="patch-diff")
    elif "*** Begin Patch" in message:
        files, patch = split_preview(message)
        if files:
            yield Static(visible("\n".join(files), lines=True), id="patch-files", markup=False)
        yield Static(patch_text(patch), id="patch-diff")
    else:
        yield Static(visible(message, lines=True), id="question-message", markup=False)


class ConfirmScreen(ModalScreen[bool]):
    """Yes / No. A patch preview (`*** Begin Patch`) is shown as files plus a coloured diff.

    A question that opens while the operator is typing for another screen must not take
    that keystroke (an Escape or `y` meant elsewhere would answer it unread): for
    `GUARD_SECONDS` after it opens every answer is ignored, and the dialog says so.
    """

    CSS_PATH = "approval.tcss"
    #: How long a fresh question ignores its answer keys and buttons.
    GUARD_SECONDS: ClassVar[float] = 0.6
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("y", "answer(True)", "Yes", id="approval-yes"),
        Binding("n", "answer(False)", "No", id="approval-no"),
        Binding("escape", "answer(False)", "No", show=False, id="approval-dismiss"),
    ]

    def __init__(
        self,
        title: str,
        message: str,
        *,
        pending: int = 0,
        yes: str = "Yes",
        who: str = "",
        diffs: Sequence[FileDiff] | None = None,
    ) -> None:
        super().__init__()
        self.question_title = title
        self.message = message
        self.pending = pending
        self.yes_label = yes
        self.who = who
        self.diffs = diffs
        self.armed = self.GUARD_SECONDS <= 0

    def set_pending(self, pending: int) -> None:
        """How many questions wait, this one included (the queue grew or shrank)."""
        self.pending = pending
        for count in self.query("#queue-count").results(Label):
            count.update(f"1 of {pending} waiting")
            count.display = pending > 1

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog"):
            yield Label(self.question_title, id="question-title")
            if self.who:
                yield Static(visible(f"Asked by {self.who}"), id="question-who", markup=False)
            count = Label(f"1 of {self.pending} waiting", id="queue-count")
            count.display = self.pending > 1
            yield count
            if not self.armed:
                yield Label("Read it first: keys answer in a moment…", id="question-guard")
            hint = HINTS.get(self.question_title)
            if hint:
                yield Static(hint, id="question-hint", markup=False)
            with VerticalScroll(id="question-body"):
                yield from question_body(self.message, self.diffs)
            with Horizontal(id="buttons"):
                yield Button(f"{self.yes_label} (y)", variant="success", id="yes", compact=True)
                yield Button("No (n)", variant="error", id="no", compact=True)

    def on_mount(self) -> None:
        # A question withdrawn while it opens (its caller cancelled) has no buttons left.
        for button in self.query("#no").results(Button):
            button.focus()
        if not self.armed:
            self.set_timer(self.GUARD_SECONDS, self._arm)

    def _arm(self) -> None:
        self.armed = True
        for guard in self.query("#question-guard"):
            guard.remove()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        if self.armed:
            self.dismiss(event.button.id == "yes")

    def action_answer(self, value: bool) -> None:
        if self.armed:  # a key in flight from another screen answers nothing
            self.dismiss(value)


class ChoiceScreen(ModalScreen[str | None]):
    """Pick one of `options` (Enter or click); Escape dismisses with None."""

    CSS_PATH = "approval.tcss"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "dismiss_none", "Back", id="choice-back"),
    ]

    def __init__(
        self, title: str, options: Sequence[str], *, current: str | None = None, note: str = ""
    ) -> None:
        super().__init__()
        self.question_title = title
        self.options = tuple(options)
        self.current = current
        self.note = note

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog"):
            # A question's title may quote a command line: shown as written, never as markup.
            yield Label(self.question_title, id="question-title", markup=False)
            if self.note:
                yield Static(self.note, id="choice-note", markup=False)
            yield OptionList(
                *(Option(literal(o), id=str(i)) for i, o in enumerate(self.options)), id="choices"
            )

    def on_mount(self) -> None:
        choices = self.query_one("#choices", OptionList)
        if self.current in self.options:
            choices.highlighted = self.options.index(self.current)
        choices.focus()

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        self.dismiss(self.options[event.option_index])

    def action_dismiss_none(self) -> None:
        self.dismiss(None)


#: What a `--monitor` console says instead of answer buttons.
WATCH_NOTE = (
    "Read-only (--monitor): answer it in a pct-tui without --monitor or in the agent; "
    "this closes when it is answered there."
)


class WatchScreen(ModalScreen[None]):
    """A question shown to a `--monitor` console: who asks and what (the same body as the
    answering modal), with no answer keys. Escape only hides it here; it closes by itself
    when the question is answered or withdrawn elsewhere."""

    CSS_PATH = "approval.tcss"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "close", "Hide", id="watch-hide"),
    ]

    def __init__(
        self,
        title: str,
        message: str,
        *,
        pending: int = 0,
        who: str = "",
        diffs: Sequence[FileDiff] | None = None,
        options: Sequence[str] = (),
    ) -> None:
        super().__init__()
        self.question_title = title
        self.message = message
        self.pending = pending
        self.who = who
        self.diffs = diffs
        self.options = tuple(options)

    def set_pending(self, pending: int) -> None:
        """How many questions wait, this one included (the queue grew or shrank)."""
        self.pending = pending
        for count in self.query("#queue-count").results(Label):
            count.update(f"1 of {pending} waiting")
            count.display = pending > 1

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog"):
            yield Label(self.question_title, id="question-title")
            if self.who:
                yield Static(visible(f"Asked by {self.who}"), id="question-who", markup=False)
            count = Label(f"1 of {self.pending} waiting", id="queue-count")
            count.display = self.pending > 1
            yield count
            yield Static(WATCH_NOTE, id="watch-note", markup=False)
            with VerticalScroll(id="question-body"):
                if self.options:
                    lines = visible("\n".join(f"  {o}" for o in self.options), lines=True)
                    yield Static(f"Options:\n{lines}", id="question-message", markup=False)
                else:
                    yield from question_body(self.message, self.diffs)
            with Horizontal(id="buttons"):
                yield Button("Hide (esc)", id="hide", compact=True)

    def on_mount(self) -> None:
        self.query_one("#hide", Button).focus()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        self.dismiss(None)

    def action_close(self) -> None:
        self.dismiss(None)
