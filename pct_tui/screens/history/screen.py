"""History: every journaled tool call, newest first and across restarts, from every agent
that used this agent dir (and the console's own actions). Filter by text, session, tool and
outcome; Enter opens a call; `u` undoes a patch after a confirmation naming its files.

The journal is polled (its newest row id, once a second) only while this screen is shown;
older calls load as the cursor reaches the end of the list.
"""

from __future__ import annotations

from typing import ClassVar

from rich.cells import cell_len
from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.coordinate import Coordinate
from textual.timer import Timer
from textual.widgets import DataTable, Input, Label, Select

from pct_tui.journal_access import OUTCOMES, CallRecord, JournalQuery, known_tools
from pct_tui.screens.base import PctScreen
from pct_tui.screens.history.call import CallScreen, confirm_and_undo
from pct_tui.screens.history.view import (
    call_time,
    detail_line,
    duration,
    first_line,
    in_time_order,
    outcome_cell,
    tool_cell,
)
from pct_tui.widgets.cells import plain_row
from pct_tui.widgets.fit_text import FitText, shorten_middle

COLUMNS = ("Time", "Session", "Tool", "Outcome", "Took", "Summary")
#: Rows fetched per page; the next page loads when the cursor reaches the last row.
PAGE = 200
POLL_SECONDS = 1.0
#: The table shows a session id without this prefix (the call view has it in full).
SESSION_PREFIX = "pct-session-"
SESSION_WIDTH = 12
#: Below 100 columns the session column narrows to leave the summary some room.
NARROW_SESSION_WIDTH = 8
MIN_SUMMARY = 12
SCROLLBAR = 2
EMPTY = (
    "No call is journaled yet. Every tool call of an attached agent (and Undo here) is "
    "recorded and listed here, newest first, also after a restart."
)
#: A monitor undoes nothing, so its empty list does not offer Undo.
MONITOR_EMPTY = (
    "No call is journaled yet. Every tool call of an attached agent is recorded and "
    "listed here, newest first, also after a restart."
)
NO_MATCH = "No call matches the filters. c clears them."
TITLE = "History: tool calls, newest first (a cell's calls under it)"
#: Shown beside the title while the journal is off, with why (`pct.journal.enabled is
#: false`, or the invalid field and what it must be).
NOT_RECORDING_WHY = " · not recording new calls ({why})"
NOT_RECORDING = NOT_RECORDING_WHY.format(why="pct.journal.enabled is false")


class HistoryScreen(PctScreen):
    MODE = "history"
    CSS_PATH = "history.tcss"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("slash", "filter", "Filter", id="history-filter"),
        Binding("c", "clear_filters", "Clear", id="history-clear"),
        Binding("enter", "open", "Open", show=False, id="history-open"),
        Binding("u", "undo", "Undo", id="history-undo"),
        Binding("escape", "to_table", "Back to list", show=False, id="history-to-list"),
    ]
    ACTS: ClassVar[dict[str, str]] = {"undo": "undo patches"}

    def __init__(self, *args: object, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        self.records: list[CallRecord] = []
        self._query: JournalQuery | None = None
        self._more = False
        self._newest = 0
        self._sessions: tuple[str, ...] = ()
        self._tools: tuple[str, ...] = known_tools()
        self._poller: Timer | None = None
        self._typing: Timer | None = None
        #: The last undo's outcome, shown while its call is highlighted: (call id, text).
        self._note: tuple[str, str] | None = None
        self._first_load = False

    def compose_body(self) -> ComposeResult:
        with Vertical(id="history-body"):
            yield Label(TITLE, id="history-title", classes="section-title")
            with Horizontal(id="history-filters"):
                yield Input(placeholder="/ filter text", id="history-text", compact=True)
                yield Select[str]([], prompt="any session", id="history-session", compact=True)
                yield Select[str](
                    [(t, t) for t in self._tools],
                    prompt="any tool",
                    id="history-tool",
                    compact=True,
                )
                yield Select[str](
                    [(o, o) for o in OUTCOMES],
                    prompt="any outcome",
                    id="history-outcome",
                    compact=True,
                )
            yield DataTable(id="history-table", cursor_type="row", zebra_stripes=True)
            yield FitText("", id="history-detail")

    def on_mount(self) -> None:
        table = self.query_one("#history-table", DataTable)
        self._add_columns(table)
        self._poller = self.set_interval(POLL_SECONDS, self._poll, pause=True)
        super().on_mount()
        table.focus()
        # at once, not after the first frame (when the screen becomes current)
        self._first_load = True
        self._load()

    # -- polling only while shown ----------------------------------------------------------
    def on_screen_resume(self) -> None:
        super().on_screen_resume()
        if self._poller is not None:
            self._poller.resume()

    def on_screen_suspend(self) -> None:
        if self._poller is not None:
            self._poller.pause()

    def refresh_view(self) -> None:
        why = self.facade.journal_off_reason if self.facade.ready else None
        note = NOT_RECORDING_WHY.format(why=why) if why else ""
        self.query_one("#history-title", Label).update(TITLE + note)
        if self.is_current and not self._first_load:  # never cancel the first load
            self._load(keep=True)

    def _poll(self) -> None:
        if self.is_current:
            self._check_new()

    @work(exclusive=True, group="history-poll", exit_on_error=False)
    async def _check_new(self) -> None:
        try:
            newest = await self.facade.journal.newest_seq()
        except Exception:
            return  # the next load shows the error
        if newest != self._newest:
            self._load(keep=True)

    # -- loading ---------------------------------------------------------------------------
    def current_query(
        self, before_seq: int | None = None, limit: int | None = None
    ) -> JournalQuery:
        def chosen(selector: str) -> str | None:
            value = self.query_one(selector, Select).value
            return value if isinstance(value, str) else None

        text = self.query_one("#history-text", Input).value.strip()
        picked = chosen("#history-outcome")
        outcome = next((o for o in OUTCOMES if o == picked), None)
        return JournalQuery(
            session=chosen("#history-session"),
            tool=chosen("#history-tool"),
            outcome=outcome,
            text=text or None,
            before_seq=before_seq,
            limit=PAGE if limit is None else limit,
        )

    @work(exclusive=True, group="history-load", exit_on_error=False)
    async def _load(self, keep: bool = False) -> None:
        """The first page again (as many rows as are loaded, when `keep`), cursor kept on
        its call."""
        journal = self.facade.journal
        limit = max(PAGE, len(self.records)) if keep else PAGE
        query = self.current_query(limit=limit)
        try:
            newest = await journal.newest_seq()
            records = await journal.calls(query)
        except Exception:
            self._show_error()
            return
        finally:
            self._first_load = False
        self._query = query
        self._newest = newest
        self._more = len(records) >= limit
        self._fill(records, keep_cursor=keep)

    @work(exclusive=True, group="history-more", exit_on_error=False)
    async def _load_more(self) -> None:
        if not self._more or not self.records:
            return
        base = self.records
        query = self.current_query(before_seq=min(r.seq for r in base))
        try:
            older = await self.facade.journal.calls(query)
        except Exception:
            self._show_error()
            return
        if self.records is not base:  # reloaded meanwhile: these rows may not match it
            return
        self._more = len(older) >= query.limit
        # Redrawn whole: an older page may hold nested calls of a cell already shown.
        self._fill([*base, *older])

    def _show_error(self) -> None:
        error = self.facade.journal.error or "unknown error"
        self.query_one("#history-detail", FitText).set_text(
            f"The call journal could not be read: {error}"
        )

    def _fill(self, records: list[CallRecord], keep_cursor: bool = True) -> None:
        """Redraw the rows; the cursor stays on its call (or row), or goes to the top."""
        table = self.query_one("#history-table", DataTable)
        selected = self.selected() if keep_cursor else None
        cursor = table.cursor_row if keep_cursor else 0
        # columns too: a column keeps the width of its widest cell ever, and the summary's
        # room is worked out from these rows only
        table.clear(columns=True)
        self._add_columns(table)
        records = in_time_order(records)
        self.records = records
        width = self._summary_width(records)
        for record in records:
            self._add_row(table, record, width)
        if records:
            ids = [r.call_id for r in records]
            row = ids.index(selected.call_id) if selected and selected.call_id in ids else cursor
            table.move_cursor(row=min(max(row, 0), len(records) - 1), animate=False)
        self._update_sessions()
        self._detail()

    @staticmethod
    def _add_columns(table: DataTable[object]) -> None:
        for column in COLUMNS:
            table.add_column(column, key=column.lower())

    def _cells(self, record: CallRecord) -> tuple[str, str, str, Text, str]:
        session = record.session_id or "—"
        width = SESSION_WIDTH if self.size.width >= 100 else NARROW_SESSION_WIDTH
        session = shorten_middle(session.removeprefix(SESSION_PREFIX), width)
        return (
            call_time(record.time),
            session,
            tool_cell(record),
            outcome_cell(record),
            duration(record.duration_ms),
        )

    def _summary_width(self, records: list[CallRecord]) -> int:
        """What the table leaves the summary, so it never scrolls sideways."""
        widths = [cell_len(c) for c in COLUMNS[:-1]]
        for record in records:
            for i, cell in enumerate(self._cells(record)):
                widths[i] = max(widths[i], cell_len(str(cell)))
        table = self.query_one("#history-table", DataTable)
        room = (table.size.width or self.size.width - 2) - SCROLLBAR
        # each column has a cell of padding on both sides
        return max(MIN_SUMMARY, room - sum(widths) - 2 * len(COLUMNS) - 1)

    def _add_row(self, table: DataTable[object], record: CallRecord, width: int) -> None:
        summary = first_line(record.summary)
        if cell_len(summary) > width:
            summary = summary[: width - 1] + "…"
        table.add_row(*plain_row((*self._cells(record), summary)), key=record.call_id)

    def on_resize(self) -> None:
        # after the table has its new width
        self.call_after_refresh(lambda: self._fill(list(self.records)) if self.records else None)

    def _update_sessions(self) -> None:
        """The session filter offers every session listed since the screen opened (a
        filtered list must not take the other sessions away) or attached now."""
        seen = set(self._sessions)
        seen.update(r.session_id for r in self.records if r.session_id)
        seen.update(s.id for s in self.facade.sessions)
        select = self.query_one("#history-session", Select)
        value = select.value
        sessions = tuple(sorted(seen))
        if sessions != self._sessions:
            self._sessions = sessions
            select.set_options((s.removeprefix(SESSION_PREFIX), s) for s in sessions)
            if isinstance(value, str):
                select.value = value

    # -- the highlighted call --------------------------------------------------------------
    def selected(self) -> CallRecord | None:
        table = self.query_one("#history-table", DataTable)
        if not table.row_count or table.cursor_row >= table.row_count:
            return None
        key = table.coordinate_to_cell_key(Coordinate(table.cursor_row, 0)).row_key.value
        return next((r for r in self.records if r.call_id == key), None)

    def _detail(self) -> None:
        detail = self.query_one("#history-detail", FitText)
        record = self.selected()
        if record is None:
            filtered = any(filters(self._query))
            detail.set_text(
                NO_MATCH if filtered else MONITOR_EMPTY if self.facade.read_only else EMPTY
            )
            return
        text = detail_line(record)
        if self._note is not None and self._note[0] == record.call_id:
            text = f"{self._note[1]}\n{text}"
        detail.set_text(text)

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        self._detail()
        if self._more and event.cursor_row >= len(self.records) - 1:
            self._load_more()

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        event.stop()
        self.action_open()

    # -- filters ---------------------------------------------------------------------------
    def on_input_changed(self, event: Input.Changed) -> None:
        event.stop()
        if self._typing is not None:
            self._typing.stop()
        self._typing = self.set_timer(0.25, self._filters_changed)

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self._filters_changed()
        self.action_to_table()

    def on_select_changed(self, event: Select.Changed) -> None:
        event.stop()
        self._filters_changed()

    def _filters_changed(self) -> None:
        if self.is_mounted and filters(self.current_query()) != filters(self._query):
            self._load()

    def action_filter(self) -> None:
        self.query_one("#history-text", Input).focus()

    def action_to_table(self) -> None:
        self.query_one("#history-table", DataTable).focus()

    def action_clear_filters(self) -> None:
        self.query_one("#history-text", Input).value = ""
        for selector in ("#history-session", "#history-tool", "#history-outcome"):
            self.query_one(selector, Select).clear()
        self._filters_changed()

    # -- open and undo ---------------------------------------------------------------------
    def action_open(self) -> None:
        record = self.selected()
        if record is not None:
            self.app.push_screen(CallScreen(record, self.facade.journal))

    def refuse(self, action: str) -> None:
        """A monitor's `u` still names the `pct undo` command that would do it."""
        self.action_undo()

    def action_undo(self) -> None:
        record = self.selected()
        if record is not None:
            self.undo(record)

    @work(exclusive=True, group="history-undo")
    async def undo(self, record: CallRecord) -> None:
        """Confirm (naming the files), undo off the loop, report the outcome, reload."""
        report = await confirm_and_undo(self, self.facade.journal, record)
        if report is not None:
            self._note = (record.call_id, report)
            self._load(keep=True)


def filters(query: JournalQuery | None) -> tuple[object, ...]:
    """What the user chose, without the paging fields."""
    if query is None:
        return (None,)
    return (query.session, query.tool, query.outcome, query.text)
