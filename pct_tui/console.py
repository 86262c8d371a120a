"""The console's view of the runtime: events, jobs, the config draft and saving.

`Console` subscribes to the runtime's event bus (runtime state, execution diagnostics,
debug metadata) and to each session's shell and Code Mode managers, and republishes what
changed as Textual signals, so screens update when something happens — never by polling.
It holds the one config draft the config and rules screens share, and saves it through the
store's revision check.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from textual.signal import Signal

from pct_runtime.config import ConfigSaveError, ConfigValidationError
from pct_runtime.config.store import MISSING_REVISION, read_regular_file, revision_of
from pct_runtime.debug import DEBUG_CHANNEL
from pct_runtime.host.events import (
    EXECUTION_DIAGNOSTICS_CHANNEL,
    diagnostics_text,
    runtime_event_text,
)
from pct_runtime.runtime import RUNTIME_EVENTS_CHANNEL, Runtime, RuntimeSession
from pct_runtime.runtime.context import built_code, built_shell
from pct_tui.state.drafts import (
    APPLY_FAILED_MESSAGE,
    SAVE_FAILED_MESSAGE,
    SAVED_MESSAGE,
    ConfigDraft,
)
from pct_tui.state.work import LocalWork

if TYPE_CHECKING:
    from textual.app import App

    from pct_runtime.runtime.context import CellView, ShellJob

MAX_EVENTS = 2000
LOGGERS = ("pct_runtime", "pct_tui", "mcp", "uvicorn", "starlette")
MAX_JOB_ROWS = 200
READ_ONLY_SAVE_MESSAGE = (
    "This console is read-only (--monitor): it does not save the configuration. "
    "Save from `pct-tui` without --monitor, or edit the file."
)


@dataclass(frozen=True)
class EventRecord:
    """One line of the events log."""

    seq: int
    clock: str
    kind: str  # runtime | diagnostics | debug | log
    text: str


@dataclass(frozen=True)
class SaveOutcome:
    ok: bool
    message: str
    code: str | None = None


class _LogHandler(logging.Handler):
    """Warnings from pct, mcp and uvicorn go to the events log, never to the terminal."""

    def __init__(self, console: Console) -> None:
        super().__init__(logging.WARNING)
        self.console = console

    def emit(self, record: logging.LogRecord) -> None:
        with contextlib.suppress(Exception):  # logging must never raise
            text = f"{record.levelname.lower()} {record.name}: {record.getMessage()}"
            self.console.log_event("log", text)


def default_clock() -> str:
    return time.strftime("%H:%M:%S")


def _local_clock(at: float) -> str:
    return time.strftime("%H:%M:%S", time.localtime(at))


class Console:
    """Runtime state for the screens. Create it in the app, `attach()` once mounted."""

    def __init__(
        self, app: App[None], runtime: Runtime, clock: Callable[[], str] = default_clock
    ) -> None:
        self.app = app
        self.runtime = runtime
        self.clock = clock
        #: An event's own time (another runtime's), as `clock` shows now; a fixed test
        #: clock stays fixed.
        self.stamp: Callable[[float], str] = (
            _local_clock if clock is default_clock else (lambda at: clock())
        )
        self.status_changed: Signal[None] = Signal(app, "status-changed")
        self.event_logged: Signal[EventRecord] = Signal(app, "event-logged")
        self.work_changed: Signal[None] = Signal(app, "work-changed")
        self.disk_signal: Signal[bool] = Signal(app, "disk-changed")
        self.events: deque[EventRecord] = deque(maxlen=MAX_EVENTS)
        self.work: list[LocalWork] = []
        self.draft = ConfigDraft.start(runtime.config, runtime.config_revision, {})
        self.disk_changed = False
        self.ready = False
        self.save_message: str | None = None
        #: `pct-tui --monitor`: the draft may be edited but is never saved.
        self.read_only = False
        #: Saves and reloads so far: a screen's message about an earlier one is stale.
        self.config_acts = 0
        self._seq = 0
        self._unsubscribe: list[Callable[[], None]] = []
        #: Per session, the shell and code manager objects this console is subscribed to.
        self._watched_sessions: dict[str, dict[str, object]] = {}
        self._status_pending = False
        self._log_handler = _LogHandler(self)
        self._propagate: dict[str, bool] = {}
        self._tasks: set[asyncio.Task[bool]] = set()

    # -- lifecycle -----------------------------------------------------------------------
    def attach(self) -> None:
        bus = self.runtime.events
        self._unsubscribe += [
            bus.subscribe(RUNTIME_EVENTS_CHANNEL, self._on_runtime_event),
            bus.subscribe(EXECUTION_DIAGNOSTICS_CHANNEL, self._on_diagnostics),
            bus.subscribe(DEBUG_CHANNEL, self._on_debug),
        ]
        for name in LOGGERS:
            logger = logging.getLogger(name)
            logger.addHandler(self._log_handler)
            self._propagate[name] = logger.propagate
            logger.propagate = False  # nothing reaches the terminal the console draws on
        for session in self.runtime.sessions:
            self._watch_session(session)

    def detach(self) -> None:
        for unsubscribe in self._unsubscribe:
            unsubscribe()
        self._unsubscribe.clear()
        for name, propagate in self._propagate.items():
            logger = logging.getLogger(name)
            logger.removeHandler(self._log_handler)
            logger.propagate = propagate
        self._propagate.clear()
        for row in self.work:
            for remove in row._removers:
                remove()

    def reset_draft(self) -> None:
        """Start a fresh draft from the runtime's current config (Cancel, after a reload)."""
        read = self.runtime.store.current()
        self.draft = ConfigDraft.start(read.config, read.revision, read.raw)

    # -- events --------------------------------------------------------------------------
    def log_event(self, kind: str, text: str, at: float | None = None) -> None:
        """`at`: when it happened, if not now (another runtime's event time)."""
        self._seq += 1
        record = EventRecord(self._seq, self.clock() if at is None else self.stamp(at), kind, text)
        self.events.append(record)
        self.event_logged.publish(record)

    def _status_soon(self) -> None:
        if self._status_pending:
            return
        self._status_pending = True

        def fire() -> None:
            self._status_pending = False
            self.status_changed.publish(None)

        self.app.call_next(fire)

    def _on_runtime_event(self, payload: object) -> None:
        if not isinstance(payload, dict):
            return
        kind = str(payload.get("type", "event"))
        self.log_event("runtime", runtime_event_text(payload))
        if kind in ("session-opened", "service-built"):
            session = self.runtime.session(str(payload.get("session")))
            if session is not None:
                self._watch_session(session)
        if kind in (
            "session-opened",
            "session-closed",
            "projection-changed",
            "model-changed",
            "reloaded",
        ):
            self._status_soon()
        if kind == "reloaded":
            # Also a reload this console did not start (`pct reload` from a terminal): the
            # banner and an unedited draft follow what is in use now.
            if not self.draft.dirty:
                self.reset_draft()
            task = asyncio.get_running_loop().create_task(self.check_disk())
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)
        if kind == "session-closed":
            self._watched_sessions.pop(str(payload.get("session")), None)
            self.work_changed.publish(None)

    def _on_diagnostics(self, payload: object) -> None:
        if isinstance(payload, dict):
            self.log_event("diagnostics", diagnostics_text(payload))
        self._status_soon()

    def _on_debug(self, payload: object) -> None:
        self.log_event("debug", json.dumps(payload, separators=(",", ":"), sort_keys=False))

    # -- work ----------------------------------------------------------------------------
    def _watch_session(self, session: RuntimeSession) -> None:
        """Subscribe to the session's shell and code managers, once per manager object.

        A sync may rebind Code Mode to a fresh manager (after a disable that had to stop
        cells); the runtime's `service-built` event brings this back for the new one.
        """
        watched = self._watched_sessions.setdefault(session.id, {})
        shell = built_shell(session.context)
        if shell is not None and watched.get("shell") is not shell:
            watched["shell"] = shell
            self._unsubscribe.append(shell.subscribe(lambda job: self._add_job(session.id, job)))
            for job in shell.jobs():
                self._add_job(session.id, job)
        code = built_code(session.context)
        if code is not None and watched.get("code") is not code:
            watched["code"] = code
            self._unsubscribe.append(code.subscribe(lambda cell: self._add_cell(session.id, cell)))
            for cell in code.cells():
                self._add_cell(session.id, cell)

    def _add_row(self, row: LocalWork, finished: asyncio.Event) -> None:
        self.work.append(row)
        if len(self.work) > MAX_JOB_ROWS:
            for old in [r for r in self.work if not r.running][: len(self.work) - MAX_JOB_ROWS]:
                self.work.remove(old)
        self.work_changed.publish(None)

        async def wait_end() -> None:
            await finished.wait()
            self.work_changed.publish(None)

        task = asyncio.get_running_loop().create_task(wait_end())

        def cancel() -> None:
            task.cancel()

        row._removers.append(cancel)

    def _journal(self, session_id: str, action: str = "stop") -> Callable[[str], None]:
        """How a console act on the session's work is journaled (`stop`, `type_input`)."""

        def record(what: str) -> None:
            session = self.runtime.session(session_id)
            if session is not None:
                session.record_action(action, what)

        return record

    def _add_job(self, session_id: str, job: ShellJob) -> None:
        row = LocalWork(
            session_id,
            "shell",
            job.id,
            job=job,
            journal=self._journal(session_id),
            journal_typed=self._journal(session_id, "type_input"),
        )
        self._add_row(row, job.settled)

    def _add_cell(self, session_id: str, cell: CellView) -> None:
        row = LocalWork(session_id, "code", cell.id, cell=cell, journal=self._journal(session_id))
        self._add_row(row, cell.terminal)

    # -- config --------------------------------------------------------------------------
    async def save(self) -> SaveOutcome:
        """Save the draft with its base revision; on success adopt and resync at once.

        A refused save keeps the draft untouched (`stale-revision`, `lock-held`, …).
        """
        if self.read_only:
            return SaveOutcome(False, READ_ONLY_SAVE_MESSAGE, "read-only")
        self.config_acts += 1
        draft = self.draft
        store = self.runtime.store
        try:
            raw = draft.raw if draft.commands_dirty else None  # pct.commands is in the raw part
            revision = await asyncio.to_thread(
                store.save, draft.for_save(), draft.base_revision, raw=raw
            )
        except ConfigSaveError as exc:
            outcome = SaveOutcome(False, f"{exc.code}: {exc.message}", exc.code)
            self.log_event("runtime", f"save-refused code={exc.code}")
            return outcome
        except ConfigValidationError as exc:
            return SaveOutcome(False, f"{SAVE_FAILED_MESSAGE} ({exc})", "invalid-config")
        except OSError:
            return SaveOutcome(False, SAVE_FAILED_MESSAGE, "write-failed")
        self.set_disk_changed(False)
        try:
            await self.runtime.config_changed()
            failed = any(
                self.runtime.projection_sync.apply_error(s.id) for s in self.runtime.sessions
            )
        except Exception:
            logging.getLogger("pct_tui").exception("applying the saved configuration failed")
            failed = True
        read = store.current()
        self.draft = ConfigDraft.start(read.config, revision, read.raw)
        self._status_soon()
        self.log_event("runtime", f"saved revision={revision[:12]}")
        if failed:
            return SaveOutcome(False, APPLY_FAILED_MESSAGE, "apply-failed")
        return SaveOutcome(True, SAVED_MESSAGE)

    async def reload(self) -> str:
        """`/pct reload`: re-read the file, resync sessions; an unedited draft follows."""
        self.config_acts += 1
        outcome = await self.runtime.reload()
        self.set_disk_changed(False)
        if not self.draft.dirty:
            self.reset_draft()
        self._status_soon()
        return outcome.message

    def set_disk_changed(self, changed: bool) -> None:
        self.disk_changed = changed
        self.disk_signal.publish(changed)

    async def check_disk(self) -> bool:
        """After a watch event or a reload: is the file different from what this runtime
        last read or saved? (Our own saves are not news.) The banner shows exactly then."""
        revision = await self.disk_revision()
        changed: bool = revision != self.runtime.store.revision
        if changed != self.disk_changed:
            self.set_disk_changed(changed)
            if changed:
                self.log_event("runtime", "config-changed-on-disk")
        return changed

    async def disk_revision(self) -> str:
        path = self.runtime.config_path

        def read() -> str:
            try:
                return revision_of(read_regular_file(path))  # a FIFO must not block
            except FileNotFoundError:
                return MISSING_REVISION
            except OSError:
                return "unreadable"

        return await asyncio.to_thread(read)
