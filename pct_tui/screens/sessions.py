"""Sessions: every attached session, its shell jobs and code cells with state, exit code
and recovery paths. Enter opens a live output viewer; `x` stops a job or cell and `T`
ends a whole session, each after a confirmation. Updated when work starts or ends."""

from __future__ import annotations

from typing import ClassVar

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.coordinate import Coordinate
from textual.widgets import DataTable, Label
from textual.widgets.data_table import RowKey

from pct_tui.console import WorkRow
from pct_tui.screens.approval import ConfirmScreen
from pct_tui.screens.base import PctScreen
from pct_tui.screens.output import OutputScreen
from pct_tui.widgets.fit_text import FitText, shorten_middle

COLUMNS = ("Session", "Kind", "Id", "State", "Exit", "Recovery")
#: A recovery path is shortened in the middle to this many cells (the detail line below
#: the table has it in full).
RECOVERY_WIDTH = 40
STATE_STYLES = {
    "running": "bold green",
    "stopping": "bold dark_orange",
    "completed": "grey62",
    "terminated": "dark_orange",
    "failed": "red",
    "open": "bold green",
}


class SessionsScreen(PctScreen):
    MODE = "sessions"
    CSS_PATH = "sessions.tcss"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("v", "view", "View output", id="work-view"),
        Binding("enter", "view", "View output", show=False, id="work-view-enter"),
        Binding("x", "stop", "Stop", id="work-stop"),
        Binding("T", "end_session", "End session", id="session-end"),
    ]

    def compose_body(self) -> ComposeResult:
        with Vertical(id="sessions-body"):
            yield Label("Sessions, shell jobs and code cells", classes="section-title")
            yield DataTable(id="work-table", cursor_type="row", zebra_stripes=True)
            yield FitText("", id="work-detail")

    def on_mount(self) -> None:
        table = self.query_one("#work-table", DataTable)
        table.add_columns(*COLUMNS)
        self.console.work_changed.subscribe(self, lambda _: self.refresh_view())
        super().on_mount()
        table.focus()

    def rows(self) -> list[tuple[str, WorkRow | None, str]]:
        """(row key, work row or None for a session, session id) in display order."""
        out: list[tuple[str, WorkRow | None, str]] = []
        sessions = {s.id for s in self.facade.sessions}
        for session in self.facade.sessions:
            out.append((f"session:{session.id}", None, session.id))
            out.extend(
                (f"{row.kind}:{row.id}", row, session.id)
                for row in self.console.work
                if row.session_id == session.id
            )
        out.extend(
            (f"{row.kind}:{row.id}", row, row.session_id)
            for row in self.console.work
            if row.session_id not in sessions
        )
        return out

    def refresh_view(self) -> None:
        table = self.query_one("#work-table", DataTable)
        cursor = table.cursor_row
        selected = self._selected_key(table)
        table.clear()
        for key, row, session_id in self.rows():
            if row is None:
                session = self.facade.session(session_id)
                model = session.model.key if session and session.model else "—"
                kind = session.kind if session else "?"
                table.add_row(
                    Text(session_id, style="bold"),
                    f"session ({kind})",
                    model,
                    Text("open", style=STATE_STYLES["open"]),
                    "",
                    "",
                    key=key,
                )
            else:
                state = row.state
                table.add_row(
                    Text(session_id, style="grey50"),
                    row.kind,
                    row.id,
                    Text(state, style=STATE_STYLES.get(state, "")),
                    row.exit_code,
                    ", ".join(shorten_middle(p, RECOVERY_WIDTH) for p in row.recovery_paths()),
                    key=key,
                )
        if table.row_count:
            # The cursor follows its job or cell (not its row number): rows inserted above
            # must not turn `x` into a stop of a different job.
            if selected is not None and selected in table.rows:
                row_index = table.get_row_index(selected)
            else:
                row_index = min(cursor, table.row_count - 1)
            table.move_cursor(row=row_index, animate=False)
        if not table.row_count:
            self.query_one("#work-detail", FitText).set_text(
                "No session is attached. Attach an agent (see the status screen)."
            )
        else:
            self._detail()

    @staticmethod
    def _selected_key(table: DataTable[object]) -> RowKey | None:
        if not table.row_count or table.cursor_row >= table.row_count:
            return None
        return table.coordinate_to_cell_key(Coordinate(table.cursor_row, 0)).row_key

    def _current(self) -> tuple[WorkRow | None, str] | None:
        key = self._selected_key(self.query_one("#work-table", DataTable))
        for row_key, row, session_id in self.rows():
            if key is not None and row_key == key.value:
                return row, session_id
        return None

    def _detail(self) -> None:
        current = self._current()
        detail = self.query_one("#work-detail", FitText)
        if current is None:
            detail.set_text("")
            return
        row, session_id = current
        if row is None:
            detail.set_text(f"Session {session_id}: Enter on a job or cell opens its output.")
        else:
            detail.set_text("\n".join(row.recovery_lines()))

    def on_data_table_row_highlighted(self, _: DataTable.RowHighlighted) -> None:
        self._detail()

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        event.stop()
        self.action_view()

    def action_view(self) -> None:
        current = self._current()
        if current is None or current[0] is None:
            return
        self.app.push_screen(OutputScreen(current[0], self.console))

    @work(exclusive=True, group="sessions-confirm")
    async def action_stop(self) -> None:
        current = self._current()
        if current is None or current[0] is None:
            return
        row = current[0]
        if not row.running:
            self.notify(f"{row.id} has already ended.")
            return
        what = "shell job" if row.kind == "shell" else "code cell"
        yes = await self.app.push_screen_wait(
            ConfirmScreen(
                f"Stop {what} {row.id}?",
                "The process group gets SIGTERM, then SIGKILL after the grace period. The "
                "agent's next poll reports it as terminated; its recovery files stay.",
                yes="Stop",
            )
        )
        if yes:
            await row.stop()
            if (session := self.facade.session(row.session_id)) is not None:
                session.record_action("stop", f"{what} {row.id}")  # the journal
            self.refresh_view()

    @work(exclusive=True, group="sessions-confirm")
    async def action_end_session(self) -> None:
        current = self._current()
        if current is None:
            return
        session = self.facade.session(current[1])
        if session is None:
            return
        yes = await self.app.push_screen_wait(
            ConfirmScreen(
                f"End session {session.id}?",
                "Its calls are cancelled, its shell jobs and code cells are stopped and its "
                "recovery files are removed. The agent must reconnect to continue.",
                yes="End session",
            )
        )
        if yes:
            await session.close()
            session.record_action("end_session", f"session {session.id}")  # the journal
            self.refresh_view()
