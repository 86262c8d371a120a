"""One JSON-lines connection to an app-server process: requests, budgets, failure, disposal.

A `Connection` owns the process (started in its own session, so its process group holds the
injected `node_repl` too) and a private temp dir. Each request has a budget that can be
paused (while a person answers a confirmation). Any failure — exit/EOF, a broken pipe, an
unreadable line, a spent budget, a cancelled dispatched request — rejects every pending
request at once with that category and reports the connection as failed; nothing here ever
re-sends a request. Server-initiated requests are handed to the owner's callback.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import shutil
import signal
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from pct_runtime.capabilities.computer_use.errors import ClientErrorCategory, ComputerUseClientError
from pct_runtime.jsontypes import JSONMapping, JSONObject

MAX_LINE_BYTES = 64 * 1024 * 1024  # a screenshot travels base64 inside one JSON line

ServerRequestHandler = Callable[["Connection", "int | str", str, object], None]
FailureHandler = Callable[["Connection", ClientErrorCategory], None]


@dataclass
class _Pending:
    future: asyncio.Future[object]
    remaining: float
    unknown_on_failure: bool
    started: float = 0.0
    timer: asyncio.TimerHandle | None = None
    pauses: int = 0
    dispatched: bool = False


class Connection:
    """A live app-server process speaking JSON lines on stdin/stdout."""

    def __init__(
        self,
        process: asyncio.subprocess.Process,
        home: Path,
        *,
        on_server_request: ServerRequestHandler,
        on_failed: FailureHandler,
        exit_grace: float,
    ) -> None:
        self.process = process
        self.home = home
        self.thread_id: str | None = None
        self.failed = False
        self.tasks: set[asyncio.Task[None]] = set()
        self._on_server_request = on_server_request
        self._on_failed = on_failed
        self._exit_grace = exit_grace
        self._pending: dict[int, _Pending] = {}
        self._next_id = 1
        self._reader = asyncio.get_running_loop().create_task(self._read())

    # ----------------------------------------------------------------- requests

    async def request(
        self,
        method: str,
        params: JSONObject,
        budget: float,
        *,
        unknown_on_failure: bool = False,
        on_id: Callable[[int], None] | None = None,
    ) -> object:
        """Send one request and await its result; raises `ComputerUseClientError`."""
        if self.failed:
            raise ComputerUseClientError("process-exit")
        loop = asyncio.get_running_loop()
        request_id = self._next_id
        self._next_id += 1
        pending = _Pending(loop.create_future(), budget, unknown_on_failure)
        self._pending[request_id] = pending
        if on_id is not None:
            on_id(request_id)
        self._arm(request_id, pending)
        # Submission counts as dispatch: the peer may act on a line we could not confirm.
        pending.dispatched = True
        self.write({"id": request_id, "method": method, "params": params})
        try:
            return await pending.future
        except asyncio.CancelledError:
            if self._pending.pop(request_id, None) is pending:
                _disarm(pending)
                # The peer may still be acting; this connection can no longer be trusted.
                self.fail("aborted")
            raise

    def notify(self, method: str) -> None:
        self.write({"method": method})

    def write(self, message: JSONMapping) -> None:
        stdin = self.process.stdin
        if self.failed or stdin is None or stdin.is_closing():
            self.fail("process-exit")
            return
        line = json.dumps(message, ensure_ascii=False, separators=(",", ":")) + "\n"
        try:
            stdin.write(line.encode("utf-8"))
        except (BrokenPipeError, ConnectionResetError, RuntimeError):
            self.fail("process-exit")
            return
        if stdin.is_closing():  # EPIPE surfaced synchronously inside write()
            self.fail("process-exit")
            return
        if stdin.transport.get_write_buffer_size() == 0:
            return  # written through; nothing to drain
        self.track(asyncio.get_running_loop().create_task(self._drain()))

    def track(self, task: asyncio.Task[None]) -> None:
        """Cancel `task` when this connection is disposed of."""
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)

    async def _drain(self) -> None:
        stdin = self.process.stdin
        if stdin is None:
            return
        try:
            await stdin.drain()
        except (BrokenPipeError, ConnectionResetError, RuntimeError):
            self.fail("process-exit")

    # ----------------------------------------------------------------- budgets

    def _arm(self, request_id: int, pending: _Pending) -> None:
        loop = asyncio.get_running_loop()
        pending.started = loop.time()
        pending.timer = loop.call_later(
            max(pending.remaining, 0.0), self._on_timer, request_id, pending
        )

    def _on_timer(self, request_id: int, pending: _Pending) -> None:
        if self._pending.get(request_id) is not pending or pending.pauses:
            return
        pending.timer = None
        pending.remaining -= asyncio.get_running_loop().time() - pending.started
        if pending.remaining > 0.001:
            self._arm(request_id, pending)
            return
        del self._pending[request_id]
        if not pending.future.done():
            unknown = pending.dispatched and pending.unknown_on_failure
            pending.future.set_exception(ComputerUseClientError("timeout", unknown_outcome=unknown))
        self.fail("timeout")

    def pause(self, request_id: int | None) -> Callable[[], None]:
        """Stop a request's budget while a person answers; returns the resume function."""
        pending = self._pending.get(request_id) if request_id is not None else None
        if pending is None or request_id is None:
            return lambda: None
        if pending.pauses == 0 and pending.timer is not None:
            pending.timer.cancel()
            pending.timer = None
            pending.remaining -= asyncio.get_running_loop().time() - pending.started
        pending.pauses += 1
        released = False

        def release() -> None:
            nonlocal released
            if released:
                return
            released = True
            pending.pauses -= 1
            if pending.pauses == 0 and self._pending.get(request_id) is pending:
                self._arm(request_id, pending)

        return release

    # ----------------------------------------------------------------- reading

    async def _read(self) -> None:
        stdout = self.process.stdout
        if stdout is None:
            self.fail("process-exit")
            return
        while not self.failed:
            try:
                raw = await stdout.readline()
            except (ValueError, asyncio.LimitOverrunError):
                self.fail("invalid-response")
                return
            if not raw:
                self.fail("process-exit")
                return
            line = raw.strip()
            if not line:
                continue
            try:
                message = json.loads(line)
            except ValueError:
                self.fail("invalid-response")
                return
            if not isinstance(message, dict):
                self.fail("invalid-response")
                return
            self._dispatch(message)

    def _dispatch(self, message: JSONObject) -> None:
        message_id = message.get("id")
        method = message.get("method")
        if isinstance(method, str) and isinstance(message_id, (int, str)):
            self._on_server_request(self, message_id, method, message.get("params"))
            return
        if method is not None:
            return  # a notification; nothing here depends on them
        if not isinstance(message_id, int) or isinstance(message_id, bool):
            return
        pending = self._pending.pop(message_id, None)
        if pending is None:
            return
        _disarm(pending)
        if pending.future.done():
            return
        if "error" in message:
            error = message.get("error")
            detail = error.get("message") if isinstance(error, dict) else None
            text = detail[:300] if isinstance(detail, str) else ""
            pending.future.set_exception(ComputerUseClientError("app-server-error", detail=text))
        elif "result" in message:
            pending.future.set_result(message["result"])
        else:
            unknown = pending.dispatched and pending.unknown_on_failure
            pending.future.set_exception(
                ComputerUseClientError("invalid-response", unknown_outcome=unknown)
            )

    # ----------------------------------------------------------------- teardown

    def fail(self, category: ClientErrorCategory) -> None:
        """Reject everything pending with `category` and report the failure (idempotent)."""
        if self.failed:
            return
        self.failed = True
        for pending in self._pending.values():
            _disarm(pending)
            if not pending.future.done():
                unknown = pending.dispatched and pending.unknown_on_failure
                pending.future.set_exception(
                    ComputerUseClientError(category, unknown_outcome=unknown)
                )
        self._pending.clear()
        self._on_failed(self, category)

    async def dispose(self) -> None:
        """Stop the process group (SIGTERM, grace, SIGKILL), reap it, remove the temp dir."""
        current = asyncio.current_task()
        for task in [self._reader, *self.tasks]:
            if task is not current and not task.done():
                task.cancel()
        if self.process.stdin is not None:
            with contextlib.suppress(Exception):
                self.process.stdin.close()
        await stop_group(self.process, self._exit_grace)
        with contextlib.suppress(BaseException):
            await self._reader
        await asyncio.to_thread(shutil.rmtree, self.home, True)


def _disarm(pending: _Pending) -> None:
    if pending.timer is not None:
        pending.timer.cancel()
        pending.timer = None


async def stop_group(process: asyncio.subprocess.Process, grace: float) -> None:
    """SIGTERM the process group, SIGKILL it after `grace`; always reap the leader."""
    pgid = process.pid  # started with start_new_session=True: the leader's pid is the group id
    if process.returncode is None:
        _signal_group(pgid, signal.SIGTERM)
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(process.wait(), grace)
    _signal_group(pgid, signal.SIGKILL)  # sweep node_repl and any straggler of the group
    await process.wait()


def _signal_group(pgid: int, sig: signal.Signals) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, sig)
