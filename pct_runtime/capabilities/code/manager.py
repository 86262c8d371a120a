"""The Code Mode cell manager: one fresh worker process per `exec`, observed through `wait`.

A cell is `running` until its program reports (`completed`/`failed`) or its process is
stopped (`terminated`). Observation is serialized per cell; exactly one observer receives
the terminal result and releases the handle, later or queued observers get `stale-cell`.
A stop (wait `terminate`, an aborted calling tool call, `close`) kills the worker process,
fences unsent nested work and aborts unsettled dispatches; a program that reports before the
kill lands keeps its own result. Nested shells are never stopped by a cell.

Nested calls (`tools.<name>(...)`) are dispatched in this order: declared and admitted at
dispatch → the tool's own validation → a concurrency slot (4, Patch sequential) → recheck →
invocation hooks (path "nested") → recheck → Patch approval (mode `confirm`) → recheck →
executor. Bridge bounds per cell: 16 outstanding requests, 256 KiB of outstanding argument
bytes, 256 KiB per payload.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import secrets
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from pct_runtime.capabilities.base import CallContext, ToolError, ToolResult
from pct_runtime.capabilities.code.adapters import CodeAdapter, PreparedCall, nested_details
from pct_runtime.capabilities.code.bridge import (
    MEMORY_LIMIT_BYTES,
    CellChannel,
    FrameError,
    WorkerStartError,
    Zygote,
)
from pct_runtime.capabilities.code.dialect import ADAPTER_NAMES, parse_exec_args, parse_wait_args
from pct_runtime.capabilities.code.render import (
    STOP_ABORTED,
    STOP_CLOSED,
    STOP_REQUEST,
    CallCounts,
    Observation,
    render,
    unknown_cell_message,
)
from pct_runtime.host.ui import UIUnavailableError
from pct_runtime.invocation import InvocationCall, InvocationHooks, resolve_invocation
from pct_runtime.output import (
    Capture,
    OutputOwner,
    RecoveryRecord,
    RollingPreview,
    truncate_text,
)

MAX_RUNNING_CELLS = 4
MAX_UNREAD_TERMINAL = 16
UNREAD_TTL_SECONDS = 300.0
OUTPUT_BUFFER_BYTES = 256 * 1024
RESULT_BYTES = 32 * 1024
ERROR_BYTES = 4 * 1024
STOP_REASON_BYTES = 1024
ADAPTER_SLOTS = 4
MAX_OUTSTANDING = 16
MAX_OUTSTANDING_BYTES = 256 * 1024
PAYLOAD_BYTES = 256 * 1024
PROGRESS_PER_CALL = 32
PROGRESS_FIELD_BYTES = 128
STOP_WAIT_SECONDS = 5.0
EXIT_GRACE_SECONDS = 5.0


def _err(code: str, message: str) -> ToolError:
    return ToolError(code, message)


@dataclass
class _Cell:
    id: str
    channel: CellChannel
    declared: frozenset[str]
    ctx: CallContext
    output: Capture
    result_cap: Capture
    error_cap: Capture
    preview: RollingPreview = field(default_factory=lambda: RollingPreview(OUTPUT_BUFFER_BYTES))
    state: str = "running"
    program_reported: bool = False
    result_parts: list[str] = field(default_factory=list)
    result_bytes: int = 0
    has_result: bool = False
    error_parts: list[str] = field(default_factory=list)
    error_bytes: int = 0
    stop_reason: str | None = None
    stop_pending: bool = False
    fenced: bool = False
    counts: CallCounts = field(default_factory=CallCounts)
    outstanding: int = 0
    outstanding_bytes: int = 0
    dispatches: set[asyncio.Task[None]] = field(default_factory=set)
    terminal: asyncio.Event = field(default_factory=asyncio.Event)
    observe_lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    released: bool = False
    reads: int = 0
    finished_at: float | None = None
    shells: dict[str, str] = field(default_factory=dict)
    progress: Callable[[Mapping[str, Any]], None] | None = None
    progress_count: int = 0
    pump: asyncio.Task[None] | None = None
    listeners: list[Callable[[str], None]] = field(default_factory=list)
    #: Adapter names admitted when the cell started (tells "not" from "no longer" admitted).
    admitted_at_start: frozenset[str] = frozenset()

    @property
    def pid(self) -> int:
        return self.channel.pid


class CodeManager:
    """Cells of one runtime session. Gating (enabled, decisions) is the runtime's job.

    `adapters`: the nested adapters by name. `admitted()`: the adapter names admitted right
    now (live config, decisions, ownership); `None` admits every adapter. `refusal(name)`:
    why `name` is not admitted right now, as the exact text a direct call to it gets (e.g.
    `Shell Sessions are not enabled.`), or None when unknown; a refused nested call quotes it
    so the model learns the cause instead of being told to fix its `uses`.
    `approval_mode()`: `"confirm"` or `"always"` for nested Patch approval.
    """

    def __init__(
        self,
        output_owner: OutputOwner,
        adapters: Mapping[str, CodeAdapter] | Iterable[CodeAdapter],
        *,
        admitted: Callable[[], Iterable[str]] | None = None,
        refusal: Callable[[str], str | None] | None = None,
        approval_mode: Callable[[], str] | str = "confirm",
        hooks: InvocationHooks | None = None,
        memory_limit: int = MEMORY_LIMIT_BYTES,
    ) -> None:
        self._owner = output_owner
        if isinstance(adapters, Mapping):
            self._adapters: dict[str, CodeAdapter] = dict(adapters)
        else:
            self._adapters = {a.name: a for a in adapters}
        self._admitted = admitted
        self._refusal = refusal
        self._approval_mode = approval_mode
        self._hooks = hooks
        self._zygote = Zygote(memory_limit)
        self._cells: dict[str, _Cell] = {}
        self._slots = asyncio.Semaphore(ADAPTER_SLOTS)
        self._patch_lock = asyncio.Lock()
        self._closed = False
        self._background: set[asyncio.Task[Any]] = set()
        self.spawned_pids: list[int] = []  # every cell process ever created (diagnostics)
        self._listeners: list[Callable[[CellView], None]] = []

    # -- public API --------------------------------------------------------------------------
    @property
    def adapter_names(self) -> tuple[str, ...]:
        return tuple(self._adapters)

    @property
    def closed(self) -> bool:
        return self._closed

    @property
    def zygote_pid(self) -> int | None:
        return self._zygote.pid

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
        self._listeners.append(listener)

        def unsubscribe() -> None:
            if listener in self._listeners:
                self._listeners.remove(listener)

        return unsubscribe

    def cells(self) -> list[CellView]:
        """Views of the cells whose handles are held now."""
        return [CellView(self, cell) for cell in self._cells.values()]

    async def stop_cell(self, cell_id: str) -> bool:
        """Stop a running cell as `wait terminate=true` would; False if it is unknown or
        already finished. The model's next `wait` reports the terminal state."""
        cell = self._cells.get(cell_id)
        if cell is None or cell.terminal.is_set():
            return False
        await self._stop(cell, STOP_REQUEST)
        return True

    async def warm(self) -> None:
        """Start the preloaded worker parent and its spares ahead of the first `exec`."""
        try:
            await self._zygote.start()
            self._zygote.fill_soon()
        except WorkerStartError as exc:
            raise _err("cell-start-failed", f"Code Mode could not start a worker: {exc}") from None

    async def exec(self, args: Mapping[str, Any], ctx: CallContext) -> ToolResult:
        request = parse_exec_args(args)
        self._check_open()
        self._prune()
        if sum(1 for c in self._cells.values() if c.state == "running") >= MAX_RUNNING_CELLS:
            raise _err(
                "cell-limit",
                f"At most {MAX_RUNNING_CELLS} Code Mode cells can run at once. Finish or stop one "
                "with wait (terminate=true) before starting another.",
            )
        admitted_at_start = frozenset(self._admitted_now())
        declared = admitted_at_start if request.uses is None else frozenset(request.uses)
        try:
            pid, sock = await self._zygote.acquire()
        except (WorkerStartError, OSError) as exc:
            raise _err(
                "cell-start-failed", f"Code Mode could not start a worker process: {exc}"
            ) from None
        self.spawned_pids.append(pid)
        try:
            channel = await CellChannel.open(pid, sock)
        except BaseException as exc:
            # The process is ours but no cell owns it yet: closing its socket ends it.
            sock.close()
            if isinstance(exc, OSError):
                raise _err(
                    "cell-start-failed", f"Code Mode could not start a worker process: {exc}"
                ) from None
            raise
        if self._closed:  # closed while the process was being created
            channel.close()
            raise _err("closed", "Code Mode is not available in this session.")
        cell_id = f"cell-{secrets.token_hex(6)}"
        cell = _Cell(
            id=cell_id,
            channel=channel,
            declared=declared,
            ctx=ctx,
            admitted_at_start=admitted_at_start,
            output=self._owner.open_capture(f"{cell_id} output", prefix_limit=OUTPUT_BUFFER_BYTES),
            result_cap=self._owner.open_capture(f"{cell_id} result", prefix_limit=RESULT_BYTES),
            error_cap=self._owner.open_capture(f"{cell_id} error", prefix_limit=ERROR_BYTES),
        )
        self._cells[cell_id] = cell
        for listener in list(self._listeners):
            try:
                listener(CellView(self, cell))
            except Exception:
                self._listeners.remove(listener)
        channel.send({"t": "run", "code": request.code, "uses": sorted(declared)})
        cell.pump = asyncio.get_running_loop().create_task(self._pump(cell))
        try:
            return await self._observe(cell, request.yield_ms, request.budget_bytes, ctx, False)
        finally:
            if not self._closed:
                self._zygote.fill_soon()  # replace the spare after answering, not before

    async def wait(self, args: Mapping[str, Any], ctx: CallContext) -> ToolResult:
        request = parse_wait_args(args)
        self._prune()
        cell = self._cells.get(request.cell_id)
        if cell is None or cell.released:
            raise _err("stale-cell", unknown_cell_message(request.cell_id))
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
                {"cellIds": incomplete},
            )

    # -- admission --------------------------------------------------------------------------
    def _check_open(self) -> None:
        if self._closed:
            raise _err("closed", "Code Mode is not available in this session.")

    def _admitted_now(self) -> set[str]:
        if self._admitted is None:
            return set(self._adapters)
        return {n for n in self._admitted() if n in self._adapters}

    def _not_admitted(self, cell: _Cell, name: str, *, earlier: bool = False) -> ToolError:
        """`adapter-disabled` for a real adapter the session does not admit, with the cause."""
        reason: str | None = None
        if self._refusal is not None:
            with contextlib.suppress(Exception):
                reason = self._refusal(name)
        if reason:
            cause = reason.strip().rstrip(".")
        else:
            cause = (
                "its capability is off, routed elsewhere or its name is owned by another tool; "
                "see `pct status`"
            )
        when = "no longer" if earlier or name in cell.admitted_at_start else "not"
        return _err(
            "adapter-disabled",
            f"tools.{name} is {when} admitted in this session ({cause}); nothing ran.",
        )

    def _undispatchable(self, cell: _Cell, name: str) -> ToolError:
        """The refusal for a call to a name that is not declared or not admitted.

        Declared but not admitted, and neither declared nor admitted, both name the
        admission cause (declaring the name would not help); admitted but not declared
        says how to declare it; a name that is no adapter at all lists the ones that exist.
        """
        if name not in ADAPTER_NAMES and name not in self._adapters:
            return _err(
                "unknown-adapter",
                f"tools.{name} is not a nested tool; only exec_command, write_stdin and "
                "apply_patch exist inside a cell. Nothing ran.",
            )
        if name not in self._admitted_now():
            return self._not_admitted(cell, name)
        declared = ", ".join(sorted(cell.declared)) or "none"
        return _err(
            "unknown-adapter",
            f"tools.{name} is not declared for this cell (declared: {declared}). List it in "
            "exec `uses`, or omit `uses` to declare every adapter admitted when the cell "
            "starts, in a new exec; nothing ran.",
        )

    def _mode(self) -> str:
        mode = self._approval_mode
        return mode() if callable(mode) else mode

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

    def _release(self, cell: _Cell) -> None:
        cell.released = True
        self._cells.pop(cell.id, None)

    # -- observation ------------------------------------------------------------------------
    async def _observe(
        self, cell: _Cell, yield_ms: int, budget: int, ctx: CallContext, stopping: bool
    ) -> ToolResult:
        try:
            async with cell.observe_lock:
                if cell.released:
                    raise _err("stale-cell", unknown_cell_message(cell.id))
                cell.progress, cell.progress_count = ctx.progress, 0
                try:
                    if not stopping and not cell.terminal.is_set():
                        with contextlib.suppress(TimeoutError):
                            await asyncio.wait_for(cell.terminal.wait(), yield_ms / 1000)
                    return await self._read(cell, budget)
                finally:
                    cell.progress = None
        except asyncio.CancelledError:
            if not cell.terminal.is_set():
                task = asyncio.get_running_loop().create_task(self._stop(cell, STOP_ABORTED))
                self._background.add(task)
                task.add_done_callback(self._background.discard)
            raise

    async def _read(self, cell: _Cell, budget: int) -> ToolResult:
        terminal = cell.terminal.is_set()
        read = cell.preview.read(budget)
        recovery: dict[str, Any] = {}
        lost = read.lost > 0
        if not terminal:
            recovery["output"] = await cell.output.publish()  # a yield publishes a stable path
        elif lost or cell.output.has_file or cell.output.snapshot().reason is not None:
            if lost:
                await cell.output.publish()  # a terminal read that lost text needs the file
            recovery["output"] = await cell.output.flush()
        result_text, result_clipped = self._bounded(cell.result_parts, RESULT_BYTES)
        error_text, error_clipped = self._bounded(cell.error_parts, ERROR_BYTES)
        if terminal:
            if result_clipped or cell.result_cap.has_file:
                recovery["result"] = await cell.result_cap.flush()
            if error_clipped or cell.error_cap.has_file:
                recovery["error"] = await cell.error_cap.flush()
        obs = Observation(
            cell_id=cell.id,
            state=cell.state,
            counts=self._counts(cell),
            output=read.text,
            output_omitted=read.omitted,
            output_dropped=read.dropped,
            result=result_text if terminal and cell.has_result else None,
            result_clipped=result_clipped if terminal else 0,
            error=error_text if terminal else None,
            error_clipped=error_clipped if terminal else 0,
            stop_pending=cell.stop_pending and not terminal,
            shells=dict(cell.shells),
            recovery=recovery,
            first_read=cell.reads == 0,
        )
        cell.reads += 1
        details: dict[str, Any] = {
            "cell_id": cell.id,
            "cellId": cell.id,
            "status": cell.state,
            "output": read.text,
            "truncated": lost,
            "dropped": read.dropped,
            "clipping": {
                "output": read.omitted > 0,
                "result": bool(obs.result_clipped),
                "error": bool(obs.error_clipped),
            },
            "nestedCalls": {
                "completed": obs.counts.completed,
                "failed": obs.counts.failed,
                "cancelled": obs.counts.cancelled,
                "unsettled": obs.counts.unsettled,
            },
            "recovery": {k: v.to_dict() for k, v in recovery.items()},
        }
        if obs.result is not None:
            details["result"] = (
                json.loads(result_text) if not result_clipped else {"clipped": result_text}
            )
        if obs.error:
            details["error"] = obs.error
        if cell.shells:
            details["shells"] = [{"session_id": s, "state": v} for s, v in cell.shells.items()]
        if obs.stop_pending:
            details["unknownOutcome"] = True
        if terminal:
            self._release(cell)
        return ToolResult(text=render(obs), details=details)

    @staticmethod
    def _bounded(parts: list[str], limit: int) -> tuple[str, int]:
        text = "".join(parts)
        kept, cut = truncate_text(text, limit)
        return kept, cut

    @staticmethod
    def _counts(cell: _Cell) -> CallCounts:
        return replace(cell.counts)

    # -- the worker pump --------------------------------------------------------------------
    async def _pump(self, cell: _Cell) -> None:
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
                    cell.output.append(text)
                    cell.preview.append(text.encode("utf-8", "replace"))
                    for listener in list(cell.listeners):
                        try:
                            listener(text)
                        except Exception:
                            cell.listeners.remove(listener)
                elif kind == "c":
                    self._on_call(cell, msg)
                elif kind in ("rs", "es") and isinstance(text, str):
                    await (cell.result_cap if kind == "rs" else cell.error_cap).ready()
                    self._append_bounded(cell, kind, text)
                elif kind == "d":
                    cell.program_reported = True
                    await self._finish(cell, "completed" if msg.get("ok") else "failed")
                    break
        except FrameError as exc:
            protocol_error = f"the worker broke the cell protocol ({exc})"
        except asyncio.CancelledError:
            raise
        if not cell.program_reported:
            cell.channel.kill()
            if protocol_error is None and cell.stop_reason is None:
                protocol_error = "the worker process exited before the program finished"
            reason = cell.stop_reason or protocol_error or STOP_CLOSED
            self._append_stop_reason(cell, reason)
            await self._finish(cell, "terminated" if cell.stop_reason else "failed")
        # Let the process exit on its own; kill it after a short grace period.
        if not cell.channel.eof.is_set():
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._drain(cell), EXIT_GRACE_SECONDS)
            cell.channel.kill()
        cell.channel.close()

    @staticmethod
    async def _drain(cell: _Cell) -> None:
        with contextlib.suppress(FrameError):
            while await cell.channel.recv() is not None:
                pass

    def _append_bounded(self, cell: _Cell, kind: str, text: str) -> None:
        cap = cell.result_cap if kind == "rs" else cell.error_cap
        cap.append(text)
        parts, limit = (
            (cell.result_parts, RESULT_BYTES) if kind == "rs" else (cell.error_parts, ERROR_BYTES)
        )
        size = len(text.encode("utf-8", "replace"))
        current = cell.result_bytes if kind == "rs" else cell.error_bytes
        if current <= limit:  # keep one chunk past the limit so clipping is measurable
            parts.append(text)
        if kind == "rs":
            cell.has_result = True
            cell.result_bytes += size
        else:
            cell.error_bytes += size

    def _append_stop_reason(self, cell: _Cell, reason: str) -> None:
        reason, _ = truncate_text(reason, STOP_REASON_BYTES)
        if cell.error_parts:
            head, _ = truncate_text("".join(cell.error_parts), ERROR_BYTES - STOP_REASON_BYTES - 2)
            cell.error_parts[:] = [head.rstrip("\n") + "\n" + reason]
        else:
            cell.error_parts.append(reason)
        cell.error_cap.append(("\n" if cell.error_bytes else "") + reason)
        cell.error_bytes = len("".join(cell.error_parts).encode("utf-8"))

    async def _finish(self, cell: _Cell, state: str) -> None:
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

    async def _fence(self, cell: _Cell) -> None:
        """Ban unsent work, cancel queue/approval waiters and abort unsettled dispatches."""
        cell.fenced = True
        pending = [t for t in cell.dispatches if not t.done()]
        for task in pending:
            task.cancel()
        if pending:
            await asyncio.wait(pending, timeout=STOP_WAIT_SECONDS)

    async def _stop(self, cell: _Cell, reason: str) -> None:
        if cell.terminal.is_set():
            return  # a program that already reported keeps its own result
        if cell.stop_reason is None:
            cell.stop_reason = reason
        cell.stop_pending = True
        cell.channel.kill()
        try:
            await asyncio.wait_for(asyncio.shield(cell.terminal.wait()), STOP_WAIT_SECONDS)
        except TimeoutError:
            return  # unconfirmed: the handle stays for another stop
        cell.stop_pending = False

    # -- nested calls -----------------------------------------------------------------------
    def _reply_error(self, cell: _Cell, call_id: Any, error: ToolError) -> None:
        cell.channel.send(
            {
                "t": "r",
                "i": call_id,
                "ok": False,
                "code": error.code,
                "m": error.message,
                "d": error.details,
            }
        )

    def _on_call(self, cell: _Cell, msg: Mapping[str, Any]) -> None:
        call_id = msg.get("i")
        name = str(msg.get("n", ""))
        if cell.fenced:
            cell.counts.cancelled += 1
            self._reply_error(cell, call_id, _err("aborted", "The cell is stopping; nothing ran."))
            return
        big = msg.get("big")
        args = msg.get("a")
        size = int(big) if isinstance(big, int) else _json_size(args)
        overload: str | None = None
        if size > PAYLOAD_BYTES:
            overload = f"the arguments are {size} bytes; one call may send at most {PAYLOAD_BYTES}"
        elif cell.outstanding >= MAX_OUTSTANDING:
            overload = f"{MAX_OUTSTANDING} nested calls are already outstanding in this cell"
        elif cell.outstanding_bytes + size > MAX_OUTSTANDING_BYTES:
            overload = (
                f"outstanding nested-call arguments would exceed {MAX_OUTSTANDING_BYTES} bytes"
            )
        if overload is not None:
            cell.counts.failed += 1
            self._reply_error(
                cell,
                call_id,
                _err(
                    "bridge-overload",
                    f"tools.{name} was not sent: {overload}. Await earlier "
                    "calls or send smaller arguments; nothing ran.",
                ),
            )
            return
        cell.outstanding += 1
        cell.outstanding_bytes += size
        task = asyncio.get_running_loop().create_task(
            self._dispatch(cell, call_id, name, args if isinstance(args, dict) else {}, size)
        )
        cell.dispatches.add(task)
        task.add_done_callback(cell.dispatches.discard)

    def _progress(self, cell: _Cell, adapter: str, phase: str, **extra: Any) -> None:
        sink = cell.progress
        if sink is None or cell.progress_count >= PROGRESS_PER_CALL:
            return
        cell.progress_count += 1
        record: dict[str, Any] = {"kind": "code-mode-nested-call", "phase": phase}
        fields = {"adapter": adapter, "cell_id": cell.id, **extra}
        for key, value in fields.items():
            if isinstance(value, str):
                value, _ = truncate_text(value, PROGRESS_FIELD_BYTES)
            record[key] = value
        with contextlib.suppress(Exception):
            sink(record)

    def _recheck(self, cell: _Cell, name: str, *, passed: bool = True) -> None:
        """Stop a dispatch the cell, the manager or admission no longer allows.

        `passed=False` for the first check of a dispatch: the name was not yet seen admitted.
        """
        if cell.fenced or cell.terminal.is_set():
            raise asyncio.CancelledError
        if self._closed:
            raise _err("closed", "Code Mode is not available in this session.")
        if name not in self._admitted_now():
            raise self._not_admitted(cell, name, earlier=passed)

    async def _dispatch(
        self, cell: _Cell, call_id: Any, name: str, args: dict[str, Any], size: int
    ) -> None:
        dispatched = False
        session: str | None = None
        self._progress(cell, name, "start")
        try:
            adapter = self._adapters.get(name)
            if adapter is None or name not in cell.declared:
                raise self._undispatchable(cell, name)
            self._recheck(cell, name, passed=False)
            nested_ctx = CallContext(
                cwd=cell.ctx.cwd,
                path="nested",
                session_id=cell.ctx.session_id,
                tool_call_id=f"{cell.ctx.tool_call_id}/{cell.id}/{call_id}",
                ui=cell.ctx.ui,
                cell_id=cell.id,
            )
            prepared: PreparedCall = await adapter.prepare(args, nested_ctx)
            session = prepared.session_id
            async with self._slots:
                lock = self._patch_lock if adapter.sequential else contextlib.nullcontext()
                async with lock:
                    self._recheck(cell, name)
                    call: InvocationCall = {
                        "tool": name,  # type: ignore[typeddict-item]
                        "path": "nested",
                        "cwd": prepared.cwd or str(cell.ctx.cwd),
                        "cellId": cell.id,
                    }
                    if session:
                        call["sessionId"] = session
                    invocation = await resolve_invocation(self._hooks, call)
                    self._recheck(cell, name)
                    if prepared.approval is not None and self._mode() != "always":
                        self._progress(cell, name, "approval", **_sid(session))
                        await self._approve(cell, prepared)
                        self._recheck(cell, name)
                    dispatched = True
                    cell.counts.unsettled += 1
                    result = await adapter.execute(
                        prepared, replace(nested_ctx, env_overlay=invocation.env)
                    )
                    cell.counts.unsettled -= 1
                    dispatched = False  # settled: no longer an unknown effect
            details = nested_details(result)
            sid = details.get("session_id")
            if name in ("exec_command", "write_stdin") and isinstance(sid, str):
                session = sid
                running = details.get("status") == "running" or details.get("running") is True
                if running:
                    cell.shells[sid] = "running"
                else:
                    cell.shells.pop(sid, None)
            reply_size = _json_size(details)
            if reply_size > PAYLOAD_BYTES:
                # The effect happened; only the reply is too large to hand to the program.
                kept = {k: details[k] for k in _CONTROL_FIELDS if k in details}
                raise ToolError(
                    "bridge-overload",
                    f"tools.{name} ran, but its reply is {reply_size} bytes, above the "
                    f"{PAYLOAD_BYTES}-byte bound, so only its control fields are returned "
                    "(in details). Ask for less output (max_output_tokens) next time; do not "
                    "rerun it to see the output.",
                    kept,
                )
            cell.counts.completed += 1
            cell.channel.send({"t": "r", "i": call_id, "ok": True, "v": details})
            self._progress(cell, name, "end", ok=True, **_sid(session))
        except ToolError as exc:
            if dispatched:
                cell.counts.unsettled -= 1
            cell.counts.failed += 1
            self._reply_error(cell, call_id, exc)
            self._progress(cell, name, "end", ok=False, code=exc.code, **_sid(session))
        except asyncio.CancelledError:
            if not dispatched:
                cell.counts.cancelled += 1
            # a dispatched call stays counted as unsettled: its effect is unknown
            self._progress(cell, name, "end", ok=False, code="aborted", **_sid(session))
        except Exception as exc:  # an executor bug must not hang the cell
            if dispatched:
                cell.counts.unsettled -= 1
            cell.counts.failed += 1
            self._reply_error(
                cell, call_id, _err("unavailable", f"tools.{name} failed unexpectedly: {exc}")
            )
            self._progress(cell, name, "end", ok=False, code="unavailable", **_sid(session))
        finally:
            cell.outstanding -= 1
            cell.outstanding_bytes -= size

    async def _approve(self, cell: _Cell, prepared: PreparedCall) -> None:
        ui = cell.ctx.ui
        unavailable = _err(
            "approval-unavailable",
            "Nested apply_patch needs the user's approval, but no interactive UI can ask in "
            "this session. Nothing was changed. Call apply_patch directly, or ask the user to "
            "set Code Mode approval to always.",
        )
        if not ui.available:
            raise unavailable
        preview, _ = truncate_text(prepared.approval or "", 800)
        try:
            ok = await ui.confirm("Code Mode: apply patch?", preview)
        except UIUnavailableError:
            raise unavailable from None
        if not ok:
            raise _err(
                "approval-denied",
                "The user declined the nested apply_patch. Nothing was changed; do not retry it "
                "without asking the user.",
            )


class CellView:
    """A read-only view of one cell for viewers: id, state, output and recovery records."""

    def __init__(self, manager: CodeManager, cell: _Cell) -> None:
        self._manager = manager
        self._cell = cell

    @property
    def id(self) -> str:
        return self._cell.id

    @property
    def state(self) -> str:
        return self._cell.state

    @property
    def terminal(self) -> asyncio.Event:
        return self._cell.terminal

    def recovery(self) -> dict[str, RecoveryRecord]:
        cell = self._cell
        return {
            "output": cell.output.snapshot(),
            "result": cell.result_cap.snapshot(),
            "error": cell.error_cap.snapshot(),
        }

    def output_text(self) -> str | None:
        """The whole output while it is only in memory (else see the recovery file)."""
        return self._cell.output.memory_text()

    def add_output_listener(self, listener: Callable[[str], None]) -> Callable[[], None]:
        """Call `listener(text)` with every output chunk of the cell (a copy)."""
        self._cell.listeners.append(listener)

        def remove() -> None:
            if listener in self._cell.listeners:
                self._cell.listeners.remove(listener)

        return remove

    async def stop(self) -> bool:
        return await self._manager.stop_cell(self._cell.id)


_CONTROL_FIELDS = (
    "session_id",
    "sessionId",
    "status",
    "exit_code",
    "exitCode",
    "recovery",
    "unknownOutcome",
    "operations",
)


def _json_size(value: Any) -> int:
    return len(
        json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode("utf-8", "replace")
    )


def _sid(session: str | None) -> dict[str, str]:
    return {"session_id": session} if session else {}
