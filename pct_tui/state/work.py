"""This console's own shell jobs and code cells, as the console model's `Work`.

Each row holds the live job or cell object of the embedded runtime, so state, output and
recovery come straight from it; another runtime's work is `remote.RemoteWork`.
"""

from __future__ import annotations

import asyncio
import signal
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from pct_tui.model import MAX_TYPED_BYTES, ActionResult

if TYPE_CHECKING:
    from pct_runtime.runtime.context import CellView, ShellJob


@dataclass(eq=False)
class LocalWork:
    """A shell job or a code cell of one of this console's sessions (a `model.Work`).

    `journal(what)` records the console's stop in the session's call journal.
    """

    session_id: str
    kind: str  # shell | code
    id: str
    job: ShellJob | None = None
    cell: CellView | None = None
    journal: Callable[[str], None] = lambda what: None
    #: Records the person's typing (`type_input`, what): the count, never the bytes.
    journal_typed: Callable[[str], None] = lambda what: None
    _removers: list[Callable[[], None]] = field(default_factory=list)

    @property
    def state(self) -> str:
        if self.job is not None:
            job = self.job
            if job.settled.is_set():
                return "terminated" if job.stop_requested else "completed"
            if job.stop_requested:
                return "stopping"
            return "running"
        assert self.cell is not None
        return self.cell.state

    @property
    def running(self) -> bool:
        return self.state in ("running", "stopping")

    @property
    def stop_known(self) -> bool:
        """A stop (anyone's) is signalling or waiting for its confirmation right now."""
        if self.job is not None:
            return self.job.stopping
        return self.cell is not None and self.cell.stopping

    @property
    def where(self) -> str | None:
        return None  # this console's own runtime

    @property
    def exit_code(self) -> str:
        if self.job is None:
            return "—"  # a cell has no exit status: its state says how it ended
        return told_exit(self.job.returncode, ended=self.job.settled.is_set())

    def recovery_lines(self) -> list[str]:
        if self.job is not None:
            return [s.capture.snapshot().line(s.label) for s in self.job.streams]
        assert self.cell is not None
        return [record.line(label) for label, record in self.cell.recovery().items()]

    def recovery_paths(self) -> list[str]:
        """The recovery files (["—"] when there are none yet)."""
        if self.job is not None:
            records = [s.capture.snapshot() for s in self.job.streams]
        else:
            assert self.cell is not None
            records = list(self.cell.recovery().values())
        return [r.path for r in records if r.path] or ["—"]

    def initial_text(self) -> str:
        """What the viewer shows before live output: the in-memory capture, else the tail
        of the recovery file (the complete output stays there)."""
        if self.job is not None:
            captures = [(s.label, s.capture) for s in self.job.streams]
        else:
            assert self.cell is not None
            text = self.cell.output_text()
            if text is not None:
                return text
            record = self.cell.recovery()["output"]
            return _file_tail("output", record.path, record.bytes)
        parts: list[str] = []
        for label, capture in captures:
            text = capture.memory_text()
            if text is None:
                snap = capture.snapshot()
                parts.append(_file_tail(label, snap.path, snap.bytes))
            else:
                parts.append(text)
        return "".join(parts)

    def follow(self, listener: Callable[[str], None]) -> Callable[[], None]:
        """Send every new output chunk to `listener` until the returned function is called."""
        if self.job is not None:
            return self.job.add_output_listener(lambda _label, text: listener(text))
        assert self.cell is not None
        return self.cell.add_output_listener(listener)

    async def stop(self) -> ActionResult:
        """Stop it for the person at this console (the model's next read says so), then
        journal the stop."""
        if self.job is not None:
            await asyncio.shield(self.job.request_stop(by="console"))
        elif self.cell is not None:
            await self.cell.stop(by="console")
        self.journal(f"{'shell job' if self.kind == 'shell' else 'code cell'} {self.id}")
        return ActionResult(True, "stopped")

    @property
    def takes_input(self) -> bool:
        job = self.job
        return (
            job is not None
            and self.running
            and job.stdin_open
            and not job.stdin_closing
            and not job.stdin_transport
        )

    async def type_input(self, text: str) -> ActionResult:
        data = text.encode("utf-8")
        if not self.takes_input or self.job is None:
            return ActionResult(False, f"stdin of {self.id} is closed or not open")
        if len(data) > MAX_TYPED_BYTES:
            return ActionResult(False, f"at most {MAX_TYPED_BYTES} UTF-8 bytes at a time")
        if self.job.type_for_operator(data, by="console") is None:
            return ActionResult(False, f"stdin of {self.id} is closed or not open")
        what = f"shell job {self.id}: the operator typed {len(data)} bytes (not recorded)"
        self.journal_typed(what)
        return ActionResult(True, f"typed {len(data)} bytes into shell job {self.id}")


VIEW_TAIL_BYTES = 256 * 1024


def told_exit(returncode: int | None, *, ended: bool) -> str:
    """The exit status as the agent's poll said it (`exit_code: 3`, `SIGTERM`, `unknown`);
    "—" while the job runs."""
    if not ended:
        return "—"
    if returncode is None:
        return "unknown"
    if returncode < 0:
        try:
            return signal.Signals(-returncode).name
        except ValueError:
            return f"signal {-returncode}"
    return str(returncode)


def _file_tail(label: str, path: str | None, total: int) -> str:
    """The last `VIEW_TAIL_BYTES` of a recovery file, with a note when earlier bytes exist."""
    if path is None:
        return f"[earlier {label}: {total} bytes, not captured to a file]\n" if total else ""
    try:
        with open(path, "rb") as handle:
            size = handle.seek(0, 2)
            start = max(0, size - VIEW_TAIL_BYTES)
            handle.seek(start)
            data = handle.read()
    except OSError:
        return f"[earlier {label}: {total} bytes in {path} (unreadable)]\n"
    text = data.decode("utf-8", errors="replace")
    if start:
        text = f"[earlier {label}: first {start} bytes are in {path}]\n" + text.split("\n", 1)[-1]
    return text
