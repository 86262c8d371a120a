"""One journaled call, opened from History: who made it, its arguments summary, the text
the model got, its recovery files and, for a patch, the diff. `u` undoes a patch."""

from __future__ import annotations

from typing import ClassVar

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.screen import Screen
from textual.widgets import Footer, Header, Label, Static

from pct_runtime.output.terminal_text import visible
from pct_tui.journal_access import CallRecord, JournalAccess, read_only_refusal
from pct_tui.screens.approval import ConfirmScreen
from pct_tui.screens.history.view import (
    duration,
    full_time,
    not_undoable,
    outcome_cell,
    undo_question,
    undo_report,
)
from pct_tui.widgets.patch_view import patch_text

#: A patch of a huge file would make a diff too long to draw; the rest is summarized.
MAX_DIFF_LINES = 3000


def shown_diff(diff: str) -> str:
    if not diff.strip():
        return "(no change in content: only modes or names)"
    lines = diff.splitlines()
    if len(lines) <= MAX_DIFF_LINES:
        return diff
    more = len(lines) - MAX_DIFF_LINES
    return "\n".join([*lines[:MAX_DIFF_LINES], f"… {more} more diff lines not shown"])


def facts(record: CallRecord) -> str:
    """The call's header block, one fact per line."""
    client = " ".join(p for p in (record.client_name, record.client_version) if p) or "—"
    route = record.transport + (
        f" · nested in {record.parent_call_id or '—'}" if record.path == "nested" else " · direct"
    )
    outcome = record.outcome + (f" ({record.error_code})" if record.error_code else "")
    lines = [
        f"Time       {full_time(record.time)} · took {duration(record.duration_ms)}",
        f"Session    {record.session_id or '—'}",
        f"Client     {client} · model {record.model or '—'}",
        f"Transport  {route}",
        f"Outcome    {outcome}",
    ]
    if record.undo_of:
        lines.append(f"Undo of    {record.undo_of}")
    if record.undone_by:
        lines.append(f"Undone by  {record.undone_by}")
    return "\n".join(lines)


class CallScreen(Screen[None]):
    CSS_PATH = "history.tcss"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "close", "Back", id="call-back"),
        Binding("q", "close", "Back", show=False, id="call-back-q"),
        Binding("u", "undo", "Undo", id="call-undo"),
    ]

    def __init__(self, record: CallRecord, journal: JournalAccess) -> None:
        super().__init__()
        self.record = record
        self.journal = journal
        self._note = ""

    def compose(self) -> ComposeResult:
        record = self.record
        title = f"{record.tool} {record.call_id} · "
        yield Header()
        yield Static(Text(title, style="bold") + outcome_cell(record), id="call-title")
        with VerticalScroll(id="call-body"):
            if self._note:
                yield Static(self._note, id="call-note", markup=False)
            yield Static(visible(facts(record), lines=True), id="call-facts", markup=False)
            yield Label("Arguments", classes="call-section")
            yield Static(shown(record.summary), id="call-summary", markup=False)
            yield Label("Result", classes="call-section")
            yield Static(shown(record.result_text), id="call-result", markup=False)
            if record.recovery_paths:
                yield Label("Recovery files", classes="call-section")
                yield Static(
                    shown("\n".join(record.recovery_paths)), id="call-recovery", markup=False
                )
            if record.patch_files:
                yield Label("Diff", classes="call-section")
                yield Static("Reading the stored file images…", id="call-diff")
        yield Footer()

    def on_mount(self) -> None:
        self.query_one("#call-body", VerticalScroll).focus()
        if self.record.patch_files:
            self._load_diff()

    @work(exclusive=True, group="call-diff", exit_on_error=False)
    async def _load_diff(self) -> None:
        try:
            diff = await self.journal.diff(self.record)
        except Exception as exc:
            text = f"The diff could not be read: {type(exc).__name__}: {exc}"
            self.query_one("#call-diff", Static).update(text)
            return
        self.query_one("#call-diff", Static).update(patch_text(shown_diff(diff)))

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        # The footer offers Undo only where it can do something.
        if action == "undo":
            return self.record.undoable and not self.journal.read_only
        return True

    def action_close(self) -> None:
        self.dismiss()

    @work(exclusive=True, group="call-undo")
    async def action_undo(self) -> None:
        report = await confirm_and_undo(self, self.journal, self.record)
        if report is None:
            return
        self._note = report
        fresh = await self.journal.get(self.record.call_id)
        if fresh is not None:
            self.record = fresh
        await self.recompose()
        self.refresh_bindings()
        if self.record.patch_files:
            self._load_diff()


async def confirm_and_undo(
    screen: Screen[None], journal: JournalAccess, record: CallRecord
) -> str | None:
    """The undo flow of both History screens: confirm naming the files, undo off the loop,
    notify the outcome (a refusal names the files changed since). None: nothing attempted."""
    if not record.undoable:
        screen.notify(not_undoable(record), severity="warning")
        return None
    if journal.read_only:
        screen.notify(read_only_refusal(record.call_id), severity="warning")
        return None
    title, message = undo_question(record)
    yes = await screen.app.push_screen_wait(ConfirmScreen(title, message, yes="Undo"))
    if not yes:
        return None
    try:
        outcome = await journal.undo(record.call_id)
    except Exception as exc:
        report = f"Undo of {record.call_id} failed: {type(exc).__name__}: {exc}"
        screen.notify(report, severity="error", timeout=8)
        return report
    report = undo_report(outcome)
    screen.notify(report, severity="information" if outcome.ok else "error", timeout=8)
    return report


def shown(text: str) -> str:
    """Recorded text as the console shows it: escaped, a dash when empty."""
    return visible(text, lines=True) if text else "—"
