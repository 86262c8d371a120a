"""The Code Mode cell manager: one fresh worker process per `exec`, observed through `wait`.

A cell is `running` until its program reports (`completed`/`failed`) or its process is
stopped (`terminated`). Observation is serialized per cell; exactly one observer receives
the terminal result and releases the handle, later or queued observers get `stale-cell`.
A stop (wait `terminate`, an aborted calling tool call, `close`) kills the worker process,
fences unsent nested work and aborts unsettled dispatches; a program that reports before the
kill lands keeps its own result. Nested shells are never stopped by a cell.

This module owns the lifecycle (start, observe, stop, prune, close) and the worker pump;
the cell record and its reads live in `cell`, nested-call dispatch (bridge bounds,
admission, slots, progress; the runtime's pipeline runs each call) in `dispatch`.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import secrets
import time
from collections.abc import Callable, Iterable

from pct_runtime.capabilities.base import CallContext, NestedCalls, ToolError, ToolResult
from pct_runtime.capabilities.code.bridge import (
    MEMORY_LIMIT_BYTES,
    CellChannel,
    FrameError,
    WorkerStartError,
    Zygote,
)
from pct_runtime.capabilities.code.cell import (
    ERROR_BYTES,
    OUTPUT_BUFFER_BYTES,
    RESULT_BYTES,
    Cell,
    CellView,
    add_listener,
    notify,
    read_cell,
)
from pct_runtime.capabilities.code.dialect import parse_exec_args, parse_wait_args
from pct_runtime.capabilities.code.dispatch import PROGRESS_PER_CALL, NestedDispatcher
from pct_runtime.capabilities.code.render import (
    CLOSED_MESSAGE,
    STOP_ABORTED,
    STOP_CLOSED,
    STOP_REQUEST,
    unknown_cell_message,
)
from pct_runtime.host.system.sandbox import Sandbox
from pct_runtime.jsontypes import JSONMapping
from pct_runtime.output import OutputOwner

__all__ = [
    "EXIT_GRACE_SECONDS",
    "MAX_RUNNING_CELLS",
    "MAX_UNREAD_TERMINAL",
    "PROGRESS_PER_CALL",
    "STOP_WAIT_SECONDS",
    "UNREAD_TTL_SECONDS",
    "CellView",
    "CodeManager",
]

_log = logging.getLogger(__name__)

MAX_RUNNING_CELLS = 4
MAX_UNREAD_TERMINAL = 16
UNREAD_TTL_SECONDS = 300.0
STOP_WAIT_SECONDS = 5.0
EXIT_GRACE_SECONDS = 5.0


class CodeManager:
    """Cells of one runtime session. Gating (enabled, decisions) is the runtime's job.

    `calls`: the runtime's call pipeline, which runs a cell's nested calls. `admitted()`:
    the adapter names admitted right now (live config, decisions, ownership); `None` admits
    every adapter `calls` reaches. `refusal(name)`: why `name` is not admitted right now, as
    the exact text a direct call to it gets (e.g. `Shell Sessions are not enabled.`), or
    None when unknown; a refused nested call quotes it so the model learns the cause
    instead of being told to fix its `uses`. `approval_mode()`: `"confirm"` or `"always"`
    for nested Patch approval.
    """

    def __init__(
        self,
        output_owner: OutputOwner,
        calls: NestedCalls,
        *,
        admitted: Callable[[], Iterable[str]] | None = None,
        refusal: Callable[[str], str | None] | None = None,
        approval_mode: Callable[[], str] | str = "confirm",
        memory_limit: int = MEMORY_LIMIT_BYTES,
        sandbox: Sandbox | None = None,
    ) -> None:
        self._owner = output_owner
        #: The session's `--sandbox` confinement, applied to the zygote and so every cell.
        self.sandbox = sandbox
        self._nested = NestedDispatcher(
            calls,
            admitted=admitted,
            refusal=refusal,
            approval_mode=approval_mode,
            closed=lambda: self._closed,
        )
        self._zygote = Zygote(memory_limit, sandbox=sandbox)
        self._cells: dict[str, Cell] = {}
        self._closed = False
        self._background: set[asyncio.Task[object]] = set()
        self.spawned_pids: list[int] = []  # every cell process ever created (diagnostics)
        self._listeners: list[Callable[[CellView], None]] = []

    # -- public API --------------------------------------------------------------------------
    @property
    def closed(self) -> bool:
        return self._closed

    def worker_pids(self) -> list[int]:
        """Process ids of live cell workers plus the zygote (for diagnostics and tests)."""
        pids = [c.pid for c in self._cells.values() if not c.channel.eof.is_set()]
        pids += self._zygote.spare_pids
        if self._zygote.pid is not None:
            pids.append(self._zygote.pid)
        return pids

    # -- observers (viewers such as the console) ---------------------------------------------
    def subscribe(self, listener: Callable[[CellView], None]) -> Callable[[], None]:
        """Call `listener(view)` when a cell starts. Returns an unsubscribe function."""
        return add_listener(self._listeners, listener)

    def cells(self) -> list[CellView]:
        """Views of the cells whose handles are held now."""
        return [CellView(self, cell) for cell in self._cells.values()]

    async def stop_cell(self, cell_id: str, *, by: str | None = None) -> bool:
        """Stop a running cell as `wait terminate=true` would; False if it is unknown or
        already finished. The model's next `wait` reports the terminal state, and who
        stopped it when `by` names a console."""
        cell = self._cells.get(cell_id)
        if cell is None or cell.terminal.is_set():
            return False
        if cell.stop_reason is None and by is not None:
            cell.stopped_by = by
        await self._stop(cell, STOP_REQUEST)
        return True

    async def warm(self) -> None:
        """Start the preloaded worker parent and its spares ahead of the first `exec`."""
        try:
            await self._zygote.start()
            self._zygote.fill_soon()
        except WorkerStartError as exc:
            raise ToolError(
                "cell-start-failed", f"Code Mode could not start a worker: {exc}"
            ) from None

    async def exec(self, args: JSONMapping, ctx: CallContext) -> ToolResult:
        request = parse_exec_args(args)
        if self._closed:
            raise ToolError("closed", CLOSED_MESSAGE)
        self._prune()
        if sum(1 for c in self._cells.values() if c.state == "running") >= MAX_RUNNING_CELLS:
            raise ToolError(
                "cell-limit",
                f"At most {MAX_RUNNING_CELLS} Code Mode cells can run at once. Finish or stop one "
                "with wait (terminate=true) before starting another.",
            )
        admitted_at_start = frozenset(self._nested.admitted_now())
        declared = admitted_at_start if request.uses is None else frozenset(request.uses)
        try:
            pid, sock = await self._zygote.acquire()
        except (WorkerStartError, OSError) as exc:
            raise _start_failed(exc) from None
        self.spawned_pids.append(pid)
        try:
            channel = await CellChannel.open(pid, sock)
        except BaseException as exc:
            # The process is ours but no cell owns it yet: closing its socket ends it.
            sock.close()
            if isinstance(exc, OSError):
                raise _start_failed(exc) from None
            raise
        if self._closed:  # closed while the process was being created
            channel.close()
            raise ToolError("closed", CLOSED_MESSAGE)
        cell_id = f"cell-{secrets.token_hex(6)}"
        cell = Cell(
            id=cell_id,
            channel=channel,
            declared=declared,
            ctx=ctx,
            admitted_at_start=admitted_at_start,
            title=next((line.strip() for line in request.code.splitlines() if line.strip()), ""),
            output=self._owner.open_capture(f"{cell_id} output", prefix_limit=OUTPUT_BUFFER_BYTES),
            result_cap=self._owner.open_capture(f"{cell_id} result", prefix_limit=RESULT_BYTES),
            error_cap=self._owner.open_capture(f"{cell_id} error", prefix_limit=ERROR_BYTES),
        )
        self._cells[cell_id] = cell
        notify(self._listeners, CellView(self, cell))
        channel.send({"t": "run", "code": request.code, "uses": sorted(declared)})
        cell.pump = asyncio.get_running_loop().create_task(self._pump(cell))
        try:
            return await self._observe(cell, request.yield_ms, request.budget_bytes, ctx, False)
        finally:
            if not self._closed:
                self._zygote.fill_soon()  # replace the spare after answering, not before

    async def wait(self, args: JSONMapping, ctx: CallContext) -> ToolResult:
        request = parse_wait_args(args)
        self._prune()
        cell = self._cells.get(request.cell_id)
        if cell is None or cell.released:
            raise ToolError("stale-cell", unknown_cell_message(request.cell_id))
        if request.terminate:
            # A stop bypasses the quiet observation queue and wakes a long poll.
            await self._stop(cell, STOP_REQUEST)
        return await self._observe(
            cell, request.yield_ms, request.budget_bytes, ctx, request.terminate
        )

    async def close(self) -> None:
        """Disable / session end: stop every cell, then the worker processes. Idempotent.

        Raises `ToolError('cleanup-incomplete')` naming the cells whose stop could not be
        confirmed; they keep their handles so a retried `close()` can try again. Recovery
        files belong to the output owner: close it afterwards.
        """
        self._closed = True
        cells = list(self._cells.values())
        await asyncio.gather(*(self._stop(c, STOP_CLOSED) for c in cells))
        incomplete = [c.id for c in cells if not c.terminal.is_set()]
        await self._zygote.close()  # also kills the whole worker process group
        for cell in cells:
            if cell.pump is not None and not cell.pump.done():
                with contextlib.suppress(TimeoutError, asyncio.CancelledError):
                    await asyncio.wait_for(asyncio.shield(cell.pump), EXIT_GRACE_SECONDS)
            if cell.terminal.is_set():
                cell.channel.close()
        if self._background:
            await asyncio.wait(self._background, timeout=EXIT_GRACE_SECONDS)
        if incomplete:
            raise ToolError(
                "cleanup-incomplete",
                f"Code Mode could not confirm that {len(incomplete)} cell(s) stopped "
                f"({', '.join(incomplete)}); their programs may still be running. Retry the "
                "cleanup.",
                {"cell_ids": incomplete},
            )

    # -- lifecycle --------------------------------------------------------------------------
    def _prune(self) -> None:
        """Lazily drop unread terminal results older than five minutes or beyond sixteen."""
        now = time.monotonic()
        unread = [c for c in self._cells.values() if c.terminal.is_set() and not c.released]
        unread.sort(key=lambda c: c.finished_at or 0.0)
        excess = len(unread) - MAX_UNREAD_TERMINAL
        for index, cell in enumerate(unread):
            expired = (now - (cell.finished_at or now)) > UNREAD_TTL_SECONDS
            if (expired or index < excess) and not cell.observe_lock.locked():
                self._release(cell)

    def _release(self, cell: Cell) -> None:
        cell.released = True
        self._cells.pop(cell.id, None)

    async def _observe(
        self, cell: Cell, yield_ms: int, budget: int, ctx: CallContext, stopping: bool
    ) -> ToolResult:
        try:
            async with cell.observe_lock:
                if cell.released:
                    raise ToolError("stale-cell", unknown_cell_message(cell.id))
                cell.progress, cell.progress_count = ctx.progress, 0
                try:
                    if not stopping and not cell.terminal.is_set():
                        with contextlib.suppress(TimeoutError):
                            await asyncio.wait_for(cell.terminal.wait(), yield_ms / 1000)
                    result, terminal = await read_cell(cell, budget)
                    if terminal:
                        self._release(cell)
                    return result
                finally:
                    cell.progress = None
        except asyncio.CancelledError:
            if not cell.terminal.is_set():
                task = asyncio.get_running_loop().create_task(self._stop(cell, STOP_ABORTED))
                self._background.add(task)
                task.add_done_callback(self._background.discard)
            raise

    async def _pump(self, cell: Cell) -> None:
        """Read the worker's frames until the program reports or the process is gone."""
        protocol_error: str | None = None
        try:
            while True:
                msg = await cell.channel.recv()
                if msg is None:
                    break
                kind = msg.get("t")
                text = msg.get("s")
                if kind == "o" and isinstance(text, str):
                    await cell.output.ready()  # the producer credit: no read until admitted
                    cell.append_output(text)
                elif kind == "c":
                    self._nested.on_call(cell, msg)
                elif kind in ("rs", "es") and isinstance(text, str):
                    await (cell.result_cap if kind == "rs" else cell.error_cap).ready()
                    cell.append_bounded(kind, text)
                elif kind == "d":
                    cell.check_result()
                    cell.program_reported = True
                    await self._finish(cell, "completed" if msg.get("ok") else "failed")
                    break
        except FrameError as exc:
            protocol_error = str(exc)
        except Exception as exc:  # a frame nothing expected must still end the cell
            _log.exception("Code Mode cell %s: reading its frames failed", cell.id)
            protocol_error = (
                f"Code Mode could not handle a frame of the cell ({type(exc).__name__}: {exc}) "
                "and stopped it."
            )
        if not cell.program_reported:
            cell.channel.kill()
            if protocol_error is None and cell.stop_reason is None:
                protocol_error = "the worker process exited before the program finished"
            reason = cell.stop_reason or protocol_error or STOP_CLOSED
            cell.append_stop_reason(reason)
            await self._finish(cell, "terminated" if cell.stop_reason else "failed")
        # Let the process exit on its own; kill it after a short grace period.
        if not cell.channel.eof.is_set():
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(_drain(cell.channel), EXIT_GRACE_SECONDS)
            cell.channel.kill()
        cell.channel.close()

    async def _finish(self, cell: Cell, state: str) -> None:
        if cell.terminal.is_set():
            return
        await self._fence(cell)
        cell.output.finish()
        cell.result_cap.finish()
        cell.error_cap.finish(source_error=state == "terminated" and bool(cell.error_parts))
        cell.state = state
        cell.stop_pending = False
        cell.finished_at = time.monotonic()
        cell.terminal.set()

    async def _fence(self, cell: Cell) -> None:
        """Ban unsent work, cancel queue/approval waiters and abort unsettled dispatches."""
        cell.fenced = True
        pending = [t for t in cell.dispatches if not t.done()]
        for task in pending:
            task.cancel()
        if pending:
            await asyncio.wait(pending, timeout=STOP_WAIT_SECONDS)

    async def _stop(self, cell: Cell, reason: str) -> None:
        if cell.terminal.is_set():
            return  # a program that already reported keeps its own result
        if cell.stop_reason is None:
            cell.stop_reason = reason
        cell.stop_pending = True
        cell.channel.kill()
        cell.stop_waiting += 1
        try:
            await asyncio.wait_for(asyncio.shield(cell.terminal.wait()), STOP_WAIT_SECONDS)
        except TimeoutError:
            return  # unconfirmed: the handle stays for another stop
        finally:
            cell.stop_waiting -= 1
        cell.stop_pending = False


def _start_failed(exc: BaseException) -> ToolError:
    return ToolError("cell-start-failed", f"Code Mode could not start a worker process: {exc}")


async def _drain(channel: CellChannel) -> None:
    with contextlib.suppress(FrameError):
        while await channel.recv() is not None:
            pass
