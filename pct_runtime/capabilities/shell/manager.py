"""`ShellManager`: the shell jobs of one runtime session, and the rules around them.

The manager owns policy — admission (16 unsettled jobs, stdin budgets), the quiet observation
queue per job, terminal-once delivery, lazy pruning of unread terminal handles, stop, and
session-end cleanup. `ShellJob` owns process mechanics; `OutputOwner` owns recovery files.

Calls come from the direct tools and from Code Mode's nested adapters with `path="nested"`.
Cancelling a direct call stops its job; cancelling a nested call only ends that poll.
"""

from __future__ import annotations

import asyncio
import errno
import os
import secrets
import time
from collections.abc import Awaitable, Callable, Mapping
from pathlib import Path

from pct_runtime.capabilities.base import CallPath, ToolError, ToolResult
from pct_runtime.capabilities.shell.dialect import (
    ExecCommandArgs,
    OutputLimits,
    WriteStdinArgs,
    normalize_exec_command_args,
    normalize_write_stdin_args,
    resolve_workdir,
)
from pct_runtime.capabilities.shell.format import (
    ShellObservation,
    ShellStatus,
    StdinReport,
    format_shell_result,
)
from pct_runtime.capabilities.shell.job import ShellJob, StdinWrite
from pct_runtime.capabilities.shell.resolve import ShellConfig, default_resolver
from pct_runtime.host.system.sandbox import Sandbox, denial_note, looks_denied
from pct_runtime.jsontypes import JSONMapping
from pct_runtime.output import PREVIEW_LIMIT_BYTES, OutputOwner, RecoveryRecord

MAX_UNSETTLED_JOBS = 16
MAX_UNREAD_TERMINAL = 32
HANDLE_TTL_SECONDS = 300.0
STDIN_MAX_BYTES = 262_144
STDIN_MAX_CALLS = 16
KILL_GRACE_SECONDS = 5.0
CONFIRM_WINDOW_SECONDS = 5.0
SETTLE_INTERVAL_SECONDS = 0.05


def stale_session_message(session_id: str) -> str:
    shown = session_id if len(session_id) <= 80 else session_id[:80] + "…"
    return (
        f"Shell session {shown} is unknown, released or expired. Use previously returned "
        "recovery paths; never rerun a command to recover output."
    )


class _StdinTicket:
    """One stdin call's share of the admission budget.

    The spec releases it only when both the request (the call) and the transport (its write)
    have settled, so bytes still flowing in the background keep counting against the limit.
    """

    def __init__(self, job: ShellJob, size: int) -> None:
        self.job = job
        self.size = size
        self.write: StdinWrite | None = None
        self._held = True
        job.stdin_pending_calls += 1
        job.stdin_pending_bytes += size

    def call_settled(self) -> None:
        if self.write is None or self.write.done.done():
            self._release()
        else:
            self.write.done.add_done_callback(lambda _done: self._release())

    def _release(self) -> None:
        if self._held:
            self._held = False
            self.job.stdin_pending_calls -= 1
            self.job.stdin_pending_bytes -= self.size


class ShellManager:
    """All shell jobs of one runtime session.

    `output` is the session's shared `OutputOwner` (the caller closes it after this manager
    and Code Mode are closed). `resolve_shell` returns the `ShellConfig` to launch through
    and may raise when none is usable (`shell-unavailable`). The environment is captured from
    `environ` (default `os.environ`) at construction; per-call overlays apply to one spawn.
    Timers are parameters so tests can shrink them.
    """

    def __init__(
        self,
        output: OutputOwner,
        resolve_shell: Callable[[], ShellConfig] = default_resolver,
        *,
        environ: Mapping[str, str] | None = None,
        kill_grace: float = KILL_GRACE_SECONDS,
        confirm_window: float = CONFIRM_WINDOW_SECONDS,
        settle_interval: float = SETTLE_INTERVAL_SECONDS,
        handle_ttl: float = HANDLE_TTL_SECONDS,
        max_unsettled: int = MAX_UNSETTLED_JOBS,
        max_unread: int = MAX_UNREAD_TERMINAL,
        stdin_max_bytes: int = STDIN_MAX_BYTES,
        stdin_max_calls: int = STDIN_MAX_CALLS,
        preview_limit: int = PREVIEW_LIMIT_BYTES,
        clock: Callable[[], float] = time.monotonic,
        sandbox: Sandbox | None = None,
    ) -> None:
        self._output = output
        #: The session's `--sandbox` confinement; every job spawns inside it.
        self.sandbox = sandbox
        self._resolve_shell = resolve_shell
        self._env = dict(os.environ if environ is None else environ)
        self._kill_grace = kill_grace
        self._confirm_window = confirm_window
        self._settle_interval = settle_interval
        self._handle_ttl = handle_ttl
        self._max_unsettled = max_unsettled
        self._max_unread = max_unread
        self._stdin_max_bytes = stdin_max_bytes
        self._stdin_max_calls = stdin_max_calls
        self._preview_limit = preview_limit
        self._clock = clock
        self._jobs: dict[str, ShellJob] = {}
        self._starting = 0
        self._closed = False
        #: A close could not confirm every stop: the jobs it kept stay reachable for
        #: poll/terminate (their ownership is real) while new starts stay refused.
        self._retaining = False
        self._background: set[asyncio.Task[bool]] = set()
        self._listeners: list[Callable[[ShellJob], None]] = []

    # -- observers -----------------------------------------------------------------------
    def subscribe(self, listener: Callable[[ShellJob], None]) -> Callable[[], None]:
        """Call `listener(job)` whenever a job has started (for viewers such as the console,
        which then follows `job.settled` and `job.add_output_listener`). Returns an
        unsubscribe function."""
        self._listeners.append(listener)

        def unsubscribe() -> None:
            if listener in self._listeners:
                self._listeners.remove(listener)

        return unsubscribe

    def jobs(self) -> list[ShellJob]:
        """The jobs whose handles are held now (running, or terminal and not yet read)."""
        return list(self._jobs.values())

    # -- introspection -------------------------------------------------------------------
    @property
    def closed(self) -> bool:
        return self._closed

    @property
    def retaining(self) -> bool:
        """True after a `close()` that could not confirm every stop (see `close`)."""
        return self._retaining

    @property
    def unsettled_count(self) -> int:
        """Jobs that have not settled (including ones whose stop could not be confirmed)."""
        return self._starting + sum(1 for j in self._jobs.values() if not j.settled.is_set())

    def session_ids(self) -> list[str]:
        """Handles currently held (running, or terminal and not yet read)."""
        return list(self._jobs)

    def has_session(self, session_id: str) -> bool:
        self._prune()
        return session_id in self._jobs

    def check_session(self, session_id: str) -> None:
        """Raise the error a call on `session_id` would get before doing anything."""
        self._ensure_open(session_id)
        self._job(session_id)

    # -- exec_command --------------------------------------------------------------------
    async def start(
        self,
        args: ExecCommandArgs | JSONMapping,
        *,
        cwd: Path,
        env_overlay: Mapping[str, str] | None = None,
        path: CallPath = "direct",
    ) -> ToolResult:
        """Launch a command once and observe it for up to its yield time.

        `cwd` is the session's working directory; `workdir` in `args` resolves against it.
        """
        parsed = args if isinstance(args, ExecCommandArgs) else normalize_exec_command_args(args)
        self._ensure_open()
        self._prune()
        if self.unsettled_count >= self._max_unsettled:
            raise ToolError(
                "session-limit",
                f"Shell Sessions already has {self._max_unsettled} jobs that have not finished. "
                "Poll them to completion or stop one with write_stdin terminate=true, then try "
                "again. Nothing ran.",
            )
        workdir = resolve_workdir(cwd, parsed.workdir)
        try:
            shell = self._resolve_shell()
        except Exception as exc:
            raise ToolError(
                "shell-unavailable",
                f"No usable local shell could be resolved ({exc}). Nothing ran.",
            ) from exc
        env = dict(self._env)
        if env_overlay:
            env.update(env_overlay)
        job = ShellJob(
            f"pct-shell-{secrets.token_hex(6)}",
            self._output.open_capture("stdout"),
            self._output.open_capture("stderr"),
            preview_limit=self._preview_limit,
            settle_interval=self._settle_interval,
            kill_grace=self._kill_grace,
            confirm_window=self._confirm_window,
            clock=self._clock,
        )
        self._starting += 1
        try:
            await job.spawn(shell, parsed.command, workdir, env, sandbox=self.sandbox)
        except OSError as exc:
            if exc.errno == errno.E2BIG:
                size = len(parsed.command.encode("utf-8", "surrogateescape"))
                raise ToolError(
                    "invalid-command",
                    f"exec_command `cmd` is too long to start: {size} UTF-8 bytes, more than "
                    "the OS accepts for one command line (about 128 KiB on Linux, including "
                    "the environment). Write the long part to a file and run that file, or "
                    "start a program that reads it and send the data with write_stdin. "
                    "Nothing ran.",
                ) from exc
            raise ToolError(
                "spawn-failed",
                f"exec_command could not start {shell.path}: {exc.strerror or exc}. Nothing ran.",
            ) from exc
        finally:
            self._starting -= 1
        self._jobs[job.id] = job
        for listener in list(self._listeners):
            try:
                listener(job)
            except Exception:
                self._listeners.remove(listener)
        if self._closed:
            self._stop_in_background(job)
            raise ToolError("manager-closed", "Shell Sessions closed while the command started.")
        return await self._observe(job, parsed.limits, path=path, first=True)

    # -- write_stdin ---------------------------------------------------------------------
    async def write(
        self, args: WriteStdinArgs | JSONMapping, *, path: CallPath = "direct"
    ) -> ToolResult:
        """Poll a job, write to its stdin, close its stdin, or terminate it."""
        parsed = args if isinstance(args, WriteStdinArgs) else normalize_write_stdin_args(args)
        self._ensure_open(parsed.session_id)
        self._prune()
        job = self._job(parsed.session_id)
        if parsed.terminate:
            return await self._terminate(job, parsed.limits, path=path)
        data = parsed.input.encode("utf-8")
        stdin_call = bool(data) or parsed.close_stdin
        if data:
            self._admit_input(job, len(data))
        if not stdin_call:
            return await self._observe(job, parsed.limits, path=path)
        ticket = _StdinTicket(job, len(data))
        try:
            return await self._observe(
                job,
                parsed.limits,
                path=path,
                data=data,
                close_stdin=parsed.close_stdin,
                ticket=ticket,
            )
        finally:
            ticket.call_settled()

    def _admit_input(self, job: ShellJob, size: int) -> None:
        if size > self._stdin_max_bytes:
            raise ToolError(
                "stdin-overload",
                f"This input is {size} UTF-8 bytes, more than the {self._stdin_max_bytes} bytes "
                "one shell session accepts at a time, so it can never be sent in one call. Split "
                f"it into write_stdin calls of at most {self._stdin_max_bytes} bytes each, "
                "polling between them while the program reads. Nothing was sent.",
            )
        if job.stdin_transport:
            raise ToolError(
                "stdin-transport",
                f"Shell session {job.id} received its command through stdin (the configured "
                "shell uses stdin command transport), so it cannot take input. Nothing was sent.",
            )
        if job.stdin_closing:
            raise ToolError(
                "stdin-closed",
                f"stdin of shell session {job.id} is closed (closeStdin, a failed write or the "
                "job ended). Poll with an empty input instead. Nothing was sent.",
            )
        if (
            job.stdin_pending_calls >= self._stdin_max_calls
            or job.stdin_pending_bytes + size > self._stdin_max_bytes
        ):
            raise ToolError(
                "stdin-overload",
                f"Shell session {job.id} already has {job.stdin_pending_calls} stdin calls and "
                f"{job.stdin_pending_bytes} UTF-8 bytes pending; the limits are "
                f"{self._stdin_max_calls} calls and {self._stdin_max_bytes} bytes. The program "
                "has not read the earlier input yet: poll with an empty input until the stdin "
                "lines report it written, then send again. Nothing was sent.",
            )

    # -- observation ---------------------------------------------------------------------
    async def _observe(
        self,
        job: ShellJob,
        limits: OutputLimits,
        *,
        path: CallPath,
        data: bytes = b"",
        close_stdin: bool = False,
        first: bool = False,
        ticket: _StdinTicket | None = None,
    ) -> ToolResult:
        """One queued observer: optional stdin effect, wait for news, read, report.

        A stdin write is submitted, then awaited only until the yield deadline: bytes the
        program has not read by then keep flowing in the background (reported as `pending`).
        """
        try:
            async with job.observe_lock:
                self._ensure_observable(job)
                write: StdinWrite | None = None
                wait_s = limits.yield_ms / 1000
                if data or close_stdin:
                    if data and job.stdin_closing:
                        raise ToolError(
                            "stdin-closed",
                            f"stdin of shell session {job.id} closed while this call waited. "
                            "Nothing was sent.",
                        )
                    loop = asyncio.get_running_loop()
                    deadline = loop.time() + wait_s
                    write = job.submit_input(data, close=close_stdin)
                    if ticket is not None:
                        ticket.write = write
                    if not write.done.done() and wait_s > 0:
                        await asyncio.wait({write.done}, timeout=wait_s)
                    wait_s = max(0.0, deadline - loop.time())
                await job.wait_for_news(wait_s, self._settle_interval)
                self._ensure_observable(job)
                report = None
                if write is not None:
                    report = StdinReport(
                        write.delivery or "pending", len(data), write.written, close_stdin
                    )
                result = await self._report(job, limits.max_output_bytes, report, first=first)
                if write is not None and write.delivery is None and not job.delivered:
                    job.stdin_backlog.append(write)  # later reports tell how it ended
                return result
        except asyncio.CancelledError:
            if path == "direct":
                self._stop_in_background(job)
            raise

    def _ensure_observable(self, job: ShellJob) -> None:
        self._ensure_open(job.id)  # the session ended while this observer waited
        if job.delivered or job.reserved_by is not None or self._jobs.get(job.id) is not job:
            raise ToolError("stale-session", stale_session_message(job.id))

    async def _report(
        self,
        job: ShellJob,
        budget: int,
        stdin: StdinReport | None,
        *,
        first: bool = False,
    ) -> ToolResult:
        out, err = job.read_preview(budget)
        settled = job.settled.is_set()
        earlier: list[StdinReport] = []
        for write in list(job.stdin_backlog):
            earlier.append(
                StdinReport(
                    write.delivery or "pending", len(write.data), write.written, write.close
                )
            )
            if write.delivery is not None:
                job.stdin_backlog.remove(write)  # its end is told once
        if settled:
            job.delivered = True  # terminal-once: claimed before any await below
        records: dict[str, RecoveryRecord] = {}
        for stream, read in zip(job.streams, (out, err), strict=True):
            capture = stream.capture
            if not settled:
                records[stream.label] = await capture.publish()  # yield: stable paths
                continue
            if read.lost or capture.file_requested or capture.snapshot().reason is not None:
                if read.lost:
                    await capture.publish()
                records[stream.label] = await capture.flush()
        shown: set[str] = set()
        for label, record in records.items():
            told = (record.state, record.reason, record.path)
            if job.recovery_told.get(label) != told:
                job.recovery_told[label] = told
                shown.add(label)
        status: ShellStatus
        if settled:
            status = "terminated" if job.stop_requested else "completed"
        elif job.unknown_outcome:
            status = "terminated"  # stop sent but not confirmed; the handle stays for retry
        else:
            status = "running"
        if settled:
            self._forget(job)  # this observer releases the handle
        typed, typed_by = job.take_operator_typed()
        result = format_shell_result(
            ShellObservation(
                session_id=job.id,
                status=status,
                returncode=job.returncode if job.leader_exited else None,
                stdout=out,
                stderr=err,
                recovery=records,
                recovery_shown=frozenset(shown),
                ever_output=job.ever_output,
                stdin=stdin,
                stdin_earlier=earlier,
                stdin_transport=job.stdin_transport and first,
                unknown_outcome=job.unknown_outcome and not settled,
                stopped_by=job.stopped_by,
                operator_typed=typed,
                typed_by=typed_by,
                preview_limit=self._preview_limit,
            )
        )
        if settled and self.sandbox is not None and job.leader_exited:
            self._note_denial(result, job.returncode, out.text + err.text)
        return result

    def _note_denial(self, result: ToolResult, returncode: int | None, output: str) -> None:
        """Tell the model a confined command failed on the sandbox, not on its own."""
        assert self.sandbox is not None
        if looks_denied(self.sandbox.settings, returncode, output):
            result.text += "\n" + denial_note(self.sandbox.settings, self.sandbox.roots)
            result.details["sandbox_denied"] = True

    # -- stop ----------------------------------------------------------------------------
    async def _terminate(
        self, job: ShellJob, limits: OutputLimits, *, path: CallPath
    ) -> ToolResult:
        """Stop bypasses the observation queue: SIGTERM, SIGKILL after the grace, confirm."""
        if job.delivered:
            raise ToolError("stale-session", stale_session_message(job.id))
        token = object()
        if job.reserved_by is None:
            job.reserved_by = token
        stop = job.request_stop()
        try:
            await asyncio.shield(stop)  # a cancelled caller does not cancel the stop itself
        except BaseException:
            if job.reserved_by is token:
                job.reserved_by = None  # the next observer may report the terminal result
            raise
        if job.reserved_by is token and not job.settled.is_set():
            job.reserved_by = None  # unknown outcome: the handle stays for poll/stop retry
        if job.reserved_by is not token and job.settled.is_set():
            raise ToolError("stale-session", stale_session_message(job.id))
        if job.delivered or self._jobs.get(job.id) is not job:
            raise ToolError("stale-session", stale_session_message(job.id))
        try:
            return await self._report(job, limits.max_output_bytes, None)
        finally:
            if job.reserved_by is token:
                job.reserved_by = None

    def _stop_in_background(self, job: ShellJob) -> None:
        if job.settled.is_set():
            return
        task = job.request_stop()
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    # -- handles -------------------------------------------------------------------------
    def _ensure_open(self, retained: str | None = None) -> None:
        """Refuse everything once closed, except calls on a job an incomplete close kept."""
        if retained is not None and self._retaining and retained in self._jobs:
            return
        if self._closed:
            raise ToolError(
                "manager-closed",
                "Shell Sessions for this session have been closed. Nothing ran.",
            )

    def _job(self, session_id: str) -> ShellJob:
        job = self._jobs.get(session_id)
        if job is None:
            raise ToolError("stale-session", stale_session_message(session_id))
        return job

    def _forget(self, job: ShellJob) -> None:
        if self._jobs.get(job.id) is job:
            del self._jobs[job.id]
        job.release()

    def _prune(self) -> None:
        """Lazily drop unread terminal handles older than the TTL or beyond the cap.

        Recovery files are not touched: they live until the output owner closes.
        """
        now = self._clock()
        unread = [j for j in self._jobs.values() if j.settled.is_set() and not j.delivered]
        for job in unread:
            if job.settled_at is not None and now - job.settled_at > self._handle_ttl:
                self._forget(job)
        unread = [j for j in unread if j.id in self._jobs]
        if len(unread) > self._max_unread:
            unread.sort(key=lambda j: j.settled_at or 0.0)
            for job in unread[: len(unread) - self._max_unread]:
                self._forget(job)

    # -- session end ---------------------------------------------------------------------
    def reopen(self) -> bool:
        """Admit new starts again after a confirmed `close()` (the route came back).

        Keeps the manager's identity, so viewers stay subscribed. Returns False (and stays
        closed) while a close is unconfirmed: retry `close()` first.
        """
        if self._retaining:
            return False
        self._closed = False
        return True

    async def close(self) -> None:
        """Session end: stop every job (SIGTERM → SIGKILL → confirm) and release handles.

        Raises `ToolError('cleanup-incomplete')` naming the jobs whose stop could not be
        confirmed; those keep their handles — `write_stdin` can still poll or terminate them,
        while new starts stay refused — so a retried `close()` can try again. Recovery files
        are the output owner's: close it afterwards.
        """
        self._closed = True
        self._retaining = False
        jobs = list(self._jobs.values())
        stops: list[Awaitable[bool]] = [
            asyncio.shield(job.request_stop()) for job in jobs if not job.settled.is_set()
        ]
        if stops:
            await asyncio.gather(*stops, return_exceptions=True)
        if self._background:
            await asyncio.gather(*list(self._background), return_exceptions=True)
        incomplete = [job.id for job in jobs if not job.settled.is_set()]
        for job in jobs:
            if job.settled.is_set():
                self._forget(job)
        if incomplete:
            self._retaining = True
            raise ToolError(
                "cleanup-incomplete",
                f"Shell Sessions could not confirm that {len(incomplete)} job(s) stopped "
                f"({', '.join(incomplete)}); their processes may still be running. Retry the "
                "cleanup.",
                {"session_ids": incomplete},
            )
