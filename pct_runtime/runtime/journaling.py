"""The runtime's side of the journal: one writer per runtime, one trace per call.

`RuntimeSession.call` is the one place every call passes (MCP over stdio and HTTP, the
console, embedders); it asks `trace` for a `CallTrace` and finishes it with the outcome.
Code Mode's nested calls are traced through the observer the trace hands the cell. The
settings (`pct.journal`) are read at start and on reload; a problem (locked database, full
disk) is published once on the runtime channel as `journal-problem`.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable, Mapping
from pathlib import Path

from pct_runtime.capabilities.base import CallPath
from pct_runtime.journal import JournalSettings, JournalWriter
from pct_runtime.journal.recorder import CallOrigin, CallTrace
from pct_runtime.journal.settings import settings_for, state_problem
from pct_runtime.jsontypes import JSONObject

Publish = Callable[[JSONObject], None]


class RuntimeJournal:
    """Owns the runtime's `JournalWriter` (None while off or before start)."""

    def __init__(self, agent_dir: Path, publish: Publish) -> None:
        self.agent_dir = agent_dir
        self._publish = publish
        self.writer: JournalWriter | None = None
        self.settings = JournalSettings(enabled=False)
        #: Why new calls are not recorded (`pct.journal.enabled is false`, or the invalid
        #: field and its rule), or None while recording.
        self.off_reason: str | None = None
        self._loop: asyncio.AbstractEventLoop | None = None

    async def start(self) -> None:
        self._loop = asyncio.get_running_loop()
        await self.refresh()

    async def refresh(self) -> None:
        """Re-read `pct.journal`; switch the writer on, off or to new limits."""
        settings = await asyncio.to_thread(settings_for, self.agent_dir)
        if settings.enabled and self.writer is None:
            problem = await asyncio.to_thread(state_problem, self.agent_dir, create=False)
            if problem is not None:  # `pct serve` says it once, with the control registry
                settings = settings._replace(enabled=False, off_reason=problem)
        self.off_reason = settings.off_reason or None
        self.settings = settings
        if self.writer is not None:
            self.writer.settings = settings
            self.writer.prune_soon()
            return
        if settings.enabled:
            self.writer = JournalWriter(self.agent_dir, settings, report=self._report)
            self.writer.prune_soon()  # retention at start, then hourly on the writer thread

    def trace(
        self,
        *,
        tool: str,
        args: Mapping[str, object] | None,
        session_id: str,
        origin: CallOrigin,
        model: str | None,
        path: CallPath,
        summary: str | None = None,
    ) -> CallTrace | None:
        writer = self.writer
        if writer is None or not writer.enabled:
            return None
        return CallTrace(
            writer,
            tool=tool,
            args=args,
            session_id=session_id,
            origin=origin,
            model=model,
            path=path,
            summary=summary,
        )

    def flush(self, timeout: float = 5.0) -> bool:
        """Block until the queued rows are written (tests; `pct serve` at exit)."""
        return self.writer.flush(timeout) if self.writer is not None else True

    def drain(self, timeout: float = 2.0) -> bool:
        """Write the queued rows now, on this thread: the first step when a server is told to
        exit (an agent sends SIGTERM and SIGKILLs a few milliseconds later; the low-priority
        writer thread may not run in between). Blocks the loop for those few writes."""
        return self.writer.drain(timeout) if self.writer is not None else True

    async def aclose(self) -> None:
        writer, self.writer = self.writer, None
        if writer is not None:
            await asyncio.to_thread(writer.close)

    def _report(self, message: str) -> None:
        """Called on the writer thread: hand the message to the loop's thread."""
        event: JSONObject = {"type": "journal-problem", "message": message}
        loop = self._loop
        if loop is None or loop.is_closed():
            return
        with contextlib.suppress(RuntimeError):
            loop.call_soon_threadsafe(self._publish, event)
