"""Sessions: every attached session, its shell jobs and code cells (indented under it) with
state, the exit status the agent was told and recovery paths — this console's and, grouped
under a header per runtime, those of every other pct runtime of the agent dir. Enter opens a
live output viewer; `x` stops a job or cell and `T` ends a whole session, each after a
confirmation (not offered in a `--monitor` console). Updated when work starts or ends."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import ClassVar, Literal, NamedTuple

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.coordinate import Coordinate
from textual.widgets import DataTable, Label
from textual.widgets.data_table import RowKey

from pct_tui.model import RuntimeView, Work
from pct_tui.remote import READ_ONLY
from pct_tui.screens.approval import ConfirmScreen
from pct_tui.screens.base import PctScreen
from pct_tui.screens.output import OutputScreen
from pct_tui.widgets.cells import plain_row
from pct_tui.widgets.fit_text import FitText, shorten_middle

#: One meaning a column on every row: what the row is (a runtime, a session under it, a
#: job or cell under its session), its kind, its state, the exit status its agent was told
#: and its recovery files. Model, client and endpoint are on the detail line below.
COLUMNS = ("Name", "Kind", "State", "Exit", "Recovery")
#: Recovery paths are shortened in the middle to the room the other columns leave, never
#: below this many cells (the detail line below the table has them in full).
MIN_RECOVERY_WIDTH = 12
#: Below this many cells a path is not worth showing beside another one.
READABLE_PATH = 24
#: Cells a row uses besides its text: one cell of padding each side of every column, and
#: the table's scrollbar.
ROW_CHROME = 2 * len(COLUMNS) + 2
STATE_STYLES = {
    "running": "bold green",
    "stopping": "bold dark_orange",
    "completed": "grey62",
    "terminated": "dark_orange",
    "failed": "red",
    "gone": "red",
    "open": "bold green",
}


class Cells(NamedTuple):
    """One row's columns before the recovery paths are fitted to the room left."""

    name: str | Text
    kind: str
    state: Text
    exit: str
    paths: tuple[str, ...] = ()

    def shown(self, room: int) -> tuple[str | Text, ...]:
        return (self.name, self.kind, self.state, self.exit, fit_paths(self.paths, room))


def fit_paths(paths: tuple[str, ...], room: int) -> str:
    """The recovery paths in `room` cells: all of them when each keeps a readable part,
    else the first one and how many more (the detail line lists every path in full)."""
    if not paths:
        return ""
    each = (room - 2 * (len(paths) - 1)) // len(paths)
    if each >= READABLE_PATH or len(paths) == 1:
        return ", ".join(shorten_middle(p, max(each, MIN_RECOVERY_WIDTH)) for p in paths)
    more = f" +{len(paths) - 1}"
    return shorten_middle(paths[0], max(room - len(more), MIN_RECOVERY_WIDTH)) + more


@dataclass(frozen=True)
class Line:
    """One table row: a runtime header, a session, or a job/cell of a session, each of the
    runtime it belongs to."""

    key: str
    kind: Literal["runtime", "session", "work"]
    runtime: RuntimeView
    session_id: str = ""
    row: Work | None = None


class SessionsScreen(PctScreen):
    MODE = "sessions"
    CSS_PATH = "sessions.tcss"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("v", "view", "View output", id="work-view"),
        Binding("enter", "view", "View output", show=False, id="work-view-enter"),
        Binding("x", "stop", "Stop", id="work-stop"),
        Binding("T", "end_session", "End session", id="session-end"),
    ]
    ACTS: ClassVar[dict[str, str]] = {"stop": "stop work", "end_session": "end sessions"}

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

    def rows(self) -> list[Line]:
        """The table's lines in display order: this console's sessions and work, then each
        other runtime's, each under a header line (headers only when there are other
        runtimes); work of a session no longer listed follows its runtime's sessions."""
        out: list[Line] = []
        runtimes = self.facade.runtimes()
        for runtime in runtimes:
            prefix = runtime.line_prefix
            if len(runtimes) > 1:
                out.append(Line(runtime.header_key, "runtime", runtime))
            sessions = runtime.sessions
            known = {s.id for s in sessions}
            for session in sessions:
                out.append(Line(f"{prefix}session:{session.id}", "session", runtime, session.id))
                out.extend(
                    Line(f"{prefix}{row.kind}:{row.id}", "work", runtime, session.id, row)
                    for row in runtime.work
                    if row.session_id == session.id
                )
            out.extend(
                Line(f"{prefix}{row.kind}:{row.id}", "work", runtime, row.session_id, row)
                for row in runtime.work
                if row.session_id not in known
            )
        return out

    def refresh_view(self) -> None:
        table = self.query_one("#work-table", DataTable)
        cursor = table.cursor_row
        selected = self._selected_key(table)
        table.clear()
        lines = self.rows()
        cells = [self._cells(line) for line in lines]
        room = self._recovery_room(cells)
        for line, row in zip(lines, cells, strict=True):
            table.add_row(*plain_row(row.shown(room)), key=line.key)
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
                "No runtime of this agent dir has a session attached."
                if self.facade.read_only
                else "No session is attached. Attach an agent (see the status screen)."
            )
        else:
            self._detail()

    def on_resize(self) -> None:
        self.refresh_view()

    def _recovery_room(self, cells: list[Cells]) -> int:
        """The Recovery column's width: what the other columns leave on screen, so Exit and
        Recovery stay visible at 80 columns."""
        used = ROW_CHROME
        for index, title in enumerate(COLUMNS[:-1]):
            used += max([len(title), *(len(str(row[index])) for row in cells)])
        return max(MIN_RECOVERY_WIDTH, (self.size.width or 80) - used)

    def _cells(self, line: Line) -> Cells:
        runtime = line.runtime
        if line.kind == "runtime":
            name, kind, transport, _endpoint = runtime.header
            live = Text("live", style=STATE_STYLES["open"])
            return Cells(Text(name, style="bold cyan"), f"{kind} ({transport})", live, "")
        if line.kind == "session":
            session = runtime.session(line.session_id)
            kind = session.cells[0] if session is not None else "session (?)"
            open_ = Text("open", style=STATE_STYLES["open"])
            return Cells(Text(line.session_id, style="bold"), kind, open_, "")
        row = line.row
        assert row is not None
        state = row.state
        return Cells(
            f"  {row.id}",
            row.kind,
            Text(state, style=STATE_STYLES.get(state, "")),
            row.exit_code,
            tuple(row.recovery_paths()),
        )

    @staticmethod
    def _selected_key(table: DataTable[object]) -> RowKey | None:
        if not table.row_count or table.cursor_row >= table.row_count:
            return None
        return table.coordinate_to_cell_key(Coordinate(table.cursor_row, 0)).row_key

    def _current(self) -> Line | None:
        key = self._selected_key(self.query_one("#work-table", DataTable))
        if key is None:
            return None
        return next((line for line in self.rows() if line.key == key.value), None)

    def _detail(self) -> None:
        line = self._current()
        detail = self.query_one("#work-detail", FitText)
        if line is None:
            detail.set_text("")
            return
        if line.kind == "runtime":
            detail.set_text(line.runtime.about)
        elif line.row is not None:
            row = line.row
            told = f" · exit {row.exit_code}" if row.exit_code != "—" else ""
            head = f"{row.kind} {row.id} of session {row.session_id}{told}"
            detail.set_text("\n".join([head, *row.recovery_lines()]))
        else:
            session = line.runtime.session(line.session_id)
            detail.set_text(session.detail if session is not None else "")

    def on_data_table_row_highlighted(self, _: DataTable.RowHighlighted) -> None:
        self._detail()

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        event.stop()
        self.action_view()

    def action_view(self) -> None:
        line = self._current()
        if line is None or line.row is None:
            return
        self.app.push_screen(OutputScreen(line.row, self.console))

    def _refused(self, what: str) -> bool:
        if self.facade.read_only:
            self.notify(f"{READ_ONLY}: it does not {what}.", severity="warning")
            return True
        return False

    @work(exclusive=True, group="sessions-confirm")
    async def action_stop(self) -> None:
        if self._refused("stop work"):
            return
        line = self._current()
        if line is None or line.row is None:
            return
        row = line.row
        if not row.running:
            self.notify(f"{row.id} has already ended.")
            return
        what = "shell job" if row.kind == "shell" else "code cell"
        if row.stop_known:  # another runtime's says so itself
            self.notify(f"{what} {row.id} is already stopping (a stop was requested earlier).")
            return
        where = f"It runs in {row.where}. " if row.where is not None else ""
        yes = await self.app.push_screen_wait(
            ConfirmScreen(
                f"Stop {what} {row.id}?",
                f"{where}The process group gets SIGTERM, then SIGKILL after the grace period. "
                "The agent's next poll reports it as terminated; its recovery files stay.",
                yes="Stop",
            )
        )
        if yes:
            self._stop(row)

    @work(group="sessions-stop")
    async def _stop(self, row: Work) -> None:
        """The stop itself, outside the exclusive confirm group: a second `x` while it
        runs must not cancel it (and lose its journal row)."""
        stopping = asyncio.ensure_future(row.stop())
        await asyncio.sleep(0)  # the stop has started: show `stopping` during the grace
        self.refresh_view()
        result = await stopping
        if not result.ok:
            self.notify(f"Not stopped: {result.message}", severity="error", timeout=10)
        self.refresh_view()

    @work(exclusive=True, group="sessions-confirm")
    async def action_end_session(self) -> None:
        if self._refused("end sessions"):
            return
        line = self._current()
        if line is None or line.kind == "runtime":
            return
        runtime = line.runtime
        if runtime.session(line.session_id) is None:
            return
        where = f"It is a session of {runtime.where}. " if runtime.where is not None else ""
        yes = await self.app.push_screen_wait(
            ConfirmScreen(
                f"End session {line.session_id}?",
                f"{where}Its calls are cancelled, its shell jobs and code cells are stopped and "
                "its recovery files are removed. The agent must reconnect to continue.",
                yes="End session",
            )
        )
        if not yes:
            return
        result = await runtime.end_session(line.session_id)
        if not result.ok:
            self.notify(f"Session not ended: {result.message}", severity="error", timeout=10)
        self.refresh_view()
