"""The console's door onto the call journal (`pct_runtime.journal`), for the History screen.

The journal is SQLite and blocking, and a connection belongs to the thread that opened it,
so one worker thread opens it lazily on first use and runs every read, diff and undo: the
event loop never waits on the disk and the connection is never shared between threads.
Screens import the record types from here, not from `pct_runtime`.
"""

from __future__ import annotations

import asyncio
import contextlib
import sqlite3
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TypeVar

from pct_runtime.host.pi.names import OWNED_TOOL_NAMES
from pct_runtime.journal import (
    OUTCOMES,
    CallRecord,
    Journal,
    JournalError,
    JournalQuery,
    Outcome,
    PatchFile,
    UndoOutcome,
    patch_diff,
    undo_patch,
)
from pct_runtime.journal.schema import damaged, is_damaged
from pct_runtime.journal.store import db_path

__all__ = [
    "OUTCOMES",
    "CallRecord",
    "JournalAccess",
    "JournalQuery",
    "Outcome",
    "PatchFile",
    "UndoOutcome",
    "known_tools",
]

T = TypeVar("T")

#: The console's undo is journaled with this transport (`pct undo` uses "cli").
CONSOLE_TRANSPORT = "console"


def read_only_refusal(call_id: str) -> str:
    return (
        f"Not undone: this console only watches (pct-tui --monitor) and changes no file. "
        f"Run `pct undo {call_id}` to undo {call_id}."
    )


def known_tools() -> tuple[str, ...]:
    """The tool filter's base choices: every tool pct serves, and the journal's `undo`."""
    return (*sorted(OWNED_TOOL_NAMES), "undo")


class JournalAccess:
    """Reads and undoes through one journal connection owned by one worker thread."""

    def __init__(
        self, agent_dir: Callable[[], Path], read_only: Callable[[], bool] = lambda: False
    ) -> None:
        self._agent_dir = agent_dir
        self._read_only = read_only
        self._executor: ThreadPoolExecutor | None = None
        self._journal: Journal | None = None
        #: Why the journal could not be opened (the screen shows it), or None.
        self.error: str | None = None

    def _open(self) -> Journal:
        if self._journal is None:
            self._journal = Journal.open(self._agent_dir())
        return self._journal

    async def _run(self, fn: Callable[[Journal], T]) -> T:
        if self._executor is None:
            self._executor = ThreadPoolExecutor(1, thread_name_prefix="pct-journal")

        def call() -> T:
            return fn(self._open())

        try:
            result = await asyncio.get_running_loop().run_in_executor(self._executor, call)
        except JournalError as exc:  # says what is wrong and what to do already
            self.error = str(exc)
            raise
        except sqlite3.Error as exc:
            path = db_path(self._agent_dir())
            self.error = str(damaged(path, exc)) if is_damaged(exc) else f"{path}: {exc}"
            raise
        except Exception as exc:
            self.error = f"{type(exc).__name__}: {exc}"
            raise
        self.error = None
        return result

    @property
    def read_only(self) -> bool:
        """A console that only watches (`pct-tui --monitor`) reads the journal but undoes
        nothing."""
        return self._read_only()

    async def calls(self, query: JournalQuery) -> list[CallRecord]:
        """Newest first, as the journal answers `query`."""
        return await self._run(lambda journal: journal.query(query))

    async def newest_seq(self) -> int:
        """The largest row id (0 for an empty journal): the cheap "anything new?" check."""
        rows = await self._run(lambda journal: journal.query(JournalQuery(limit=1)))
        return rows[0].seq if rows else 0

    async def get(self, call_id: str) -> CallRecord | None:
        return await self._run(lambda journal: journal.get(call_id))

    async def diff(self, record: CallRecord) -> str:
        """The patch's unified diff before → after, from the stored images."""
        return await self._run(lambda journal: patch_diff(journal, record))

    async def undo(self, call_id: str) -> UndoOutcome:
        """Restore the files of patch `call_id` (refused, changing nothing, when one of them
        changed since); journaled as a console call."""
        if self.read_only:
            return UndoOutcome(False, read_only_refusal(call_id))
        return await self._run(
            lambda journal: undo_patch(journal, call_id, transport=CONSOLE_TRANSPORT)
        )

    async def aclose(self) -> None:
        """Close the connection in its own thread and end the thread."""
        executor, self._executor = self._executor, None
        if executor is None:
            return
        journal, self._journal = self._journal, None
        if journal is not None:
            with contextlib.suppress(Exception):
                await asyncio.get_running_loop().run_in_executor(executor, journal.close)
        executor.shutdown(wait=False)
