"""The Computer Use app-server client: JSON lines over the bundled `codex app-server` stdio.

One client owns at most one transport (`rpc.Connection`) at a time: the app-server process
(its own process group, so the injected `node_repl` never outlives it), a private temp dir as
its cwd and `CODEX_HOME`, and one ephemeral thread whose only MCP server is `node_repl`
(tool `js`). The transport starts lazily on the first call and is reused; any transport
failure (exit, broken pipe, time-out, unreadable line) rejects every pending request and
disposes the transport, and the next call starts a fresh one. Approvals (the canonical-app
set) belong to the client, not the transport, and are dropped only by `reset()` / `close()`.

Time-outs (spec defaults, constructor parameters so tests can shrink them): tool 120 s (the
`js` time-out), request 130 s (the outer RPC budget, paused while a person answers the
`Computer Use access` confirmation), startup 120 s, poll 200 ms, status probe 30 s, exit
grace 5 s.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from pct_runtime.capabilities.base import ImagePart, ToolResult
from pct_runtime.capabilities.computer_use.approval import (
    DECLINE,
    ApprovalMemory,
    ApprovalMode,
    ApprovalOutcome,
    decide_elicitation,
    validate_elicitation,
)
from pct_runtime.capabilities.computer_use.errors import (
    ClientErrorCategory,
    ComputerUseClientError,
    declined_error,
)
from pct_runtime.capabilities.computer_use.paths import ComputerUseRuntime
from pct_runtime.capabilities.computer_use.rpc import MAX_LINE_BYTES, Connection
from pct_runtime.capabilities.computer_use.templates import (
    ACTION_METHODS,
    PROBE_JAVASCRIPT,
    PROBE_TITLE,
    TITLES,
    ComputerUseMethod,
    ContentError,
    build_javascript,
    convert_content,
    first_text,
)
from pct_runtime.debug import DISABLED, DebugRecord, DebugSink
from pct_runtime.host.ui import UIPort
from pct_runtime.jsontypes import JSONMapping, JSONObject
from pct_runtime.version import version

ELICITATION_METHOD = "mcpServer/elicitation/request"
_TERMINAL_STATUSES = frozenset({"failed", "cancelled", "disabled"})


@dataclass
class _Invocation:
    """One tool call in flight: where its approvals are asked and what they decided."""

    ui: UIPort | None
    connection: Connection
    request_id: int | None = None
    active: bool = True
    outcomes: list[ApprovalOutcome] = field(default_factory=list)
    tasks: set[asyncio.Task[None]] = field(default_factory=set)


class ComputerUseClient:
    """Lazy, reusable app-server client for the six tools and the status probe."""

    def __init__(
        self,
        runtime: ComputerUseRuntime,
        *,
        approval_mode: ApprovalMode = "confirm",
        env: Mapping[str, str] | None = None,
        app_server_args: Sequence[str] = ("app-server",),
        tool_timeout: float = 120.0,
        request_timeout: float = 130.0,
        startup_timeout: float = 120.0,
        poll_interval: float = 0.2,
        status_probe_timeout: float = 30.0,
        exit_grace: float = 5.0,
        temp_root: Path | None = None,
        debug: DebugSink = DISABLED,
    ) -> None:
        self._runtime = runtime
        self._debug = debug
        self._approval_mode: ApprovalMode = approval_mode
        self._env = dict(os.environ if env is None else env)
        self._args = tuple(app_server_args)
        self._tool_timeout = tool_timeout
        self._request_timeout = request_timeout
        self._startup_timeout = startup_timeout
        self._poll_interval = poll_interval
        self._probe_timeout = status_probe_timeout
        self._exit_grace = exit_grace
        self._temp_root = temp_root
        self._memory = ApprovalMemory()
        self._transport: Connection | None = None
        self._invocation: _Invocation | None = None
        self._start_lock = asyncio.Lock()
        self._call_lock = asyncio.Lock()
        self._cleanups: set[asyncio.Task[None]] = set()
        self._closed = False
        self._epoch = 0  # bumped by reset(): a start that began earlier must not survive it
        self._requires_inspection = False

    # ----------------------------------------------------------------- public API

    @property
    def approval_mode(self) -> ApprovalMode:
        return self._approval_mode

    @property
    def approved_apps(self) -> frozenset[str]:
        """Canonical apps remembered in memory for this client (never persisted)."""
        return self._memory.apps

    @property
    def is_closed(self) -> bool:
        return self._closed

    @property
    def is_running(self) -> bool:
        """True while a started transport (app-server + thread) is live."""
        t = self._transport
        return t is not None and not t.failed and t.thread_id is not None

    @property
    def process_id(self) -> int | None:
        t = self._transport
        return t.process.pid if t is not None and not t.failed else None

    async def invoke(
        self,
        method: ComputerUseMethod,
        args: JSONMapping,
        *,
        ui: UIPort | None = None,
    ) -> ToolResult:
        """Run one tool's fixed template. Never retries; raises `ComputerUseClientError`."""
        is_action = method in ACTION_METHODS
        async with self._call_lock:
            if self._closed:
                raise ComputerUseClientError("closed")
            if is_action and self._requires_inspection:
                raise ComputerUseClientError("inspection-required")
            started_at = asyncio.get_running_loop().time()
            texts: list[str] = []
            images: list[ImagePart] = []
            category: str | None = None
            try:
                transport = await self._ensure_started()
            except ComputerUseClientError as error:
                self._emit(started_at, None, error.category, texts, images)
                raise
            invocation = _Invocation(ui=ui, connection=transport)
            self._invocation = invocation
            try:
                blocks = await self._call_node_repl(
                    transport,
                    build_javascript(method, args),
                    TITLES[method],
                    self._tool_timeout,
                    unknown_on_failure=is_action,
                    invocation=invocation,
                )
                try:
                    texts, images = convert_content(blocks)
                except ContentError as error:
                    raise ComputerUseClientError(
                        "invalid-response", unknown_outcome=is_action
                    ) from error
            except ComputerUseClientError as error:
                if is_action and error.unknown_outcome:
                    self._requires_inspection = True
                explained = _explain_approval(error, invocation)
                category = explained.category
                if explained is error:
                    raise
                raise explained from error
            except asyncio.CancelledError:
                category = "aborted"
                if is_action and invocation.request_id is not None:
                    self._requires_inspection = True
                raise
            finally:
                self._end_invocation(invocation)
                self._emit(started_at, invocation, category, texts, images)
            if method == "get_app_state":
                self._requires_inspection = False
            details: JSONObject = {
                "method": method,
                "block_count": len(texts) + len(images),
                "image_count": len(images),
            }
            return ToolResult(text="\n".join(texts), details=details, images=images)

    def _emit(
        self,
        started_at: float,
        invocation: _Invocation | None,
        category: str | None,
        texts: Sequence[str],
        images: Sequence[ImagePart],
    ) -> None:
        """Debug metadata only: duration, RPC id, block counts, error category."""
        if not self._debug.enabled:
            return
        elapsed = asyncio.get_running_loop().time() - started_at
        rpc_id = invocation.request_id if invocation is not None else None
        self._debug.emit(
            DebugRecord(
                feature="computer-use",
                duration_ms=round(elapsed * 1000),
                request_id=str(rpc_id) if rpc_id is not None else None,
                content_blocks=None if category else {"text": len(texts), "image": len(images)},
                error_category=category,
            )
        )

    async def probe_target(self) -> None:
        """Start (or reuse) the transport and require `sky.target === "mac"`."""
        async with self._call_lock:
            if self._closed:
                raise ComputerUseClientError("closed")
            transport = await self._ensure_started()
            blocks = await self._call_node_repl(
                transport, PROBE_JAVASCRIPT, PROBE_TITLE, self._probe_timeout, total=True
            )
            if first_text(blocks).strip() != "mac":
                raise ComputerUseClientError("incompatible-sky-target")

    async def set_approval_mode(self, mode: ApprovalMode) -> None:
        """Changing the mode is a reset: switching Always → Confirm asks again."""
        if mode != self._approval_mode:
            self._approval_mode = mode
            await self.reset()

    async def reset(self) -> None:
        """Forget every approval and stop the transport; the next call starts afresh.

        The runtime calls this on new/resume/fork, global reload, restart, disabling, an
        approval-mode change, losing eligibility and a tool-name conflict.
        """
        self._epoch += 1
        self._memory.clear()
        self._requires_inspection = False
        if self._transport is not None:
            self._transport.fail("closed")
        await self._join_cleanups()

    async def close(self) -> None:
        """Reset and refuse further calls; waits until the process group is gone.

        A start that was spawning a process when close began notices the reset right after
        the spawn and disposes of it; waiting for the start lock covers that window.
        """
        self._closed = True
        await self.reset()
        async with self._start_lock:
            await self._join_cleanups()

    # ----------------------------------------------------------------- startup

    async def _ensure_started(self) -> Connection:
        async with self._start_lock:
            if self._closed:
                raise ComputerUseClientError("closed")
            current = self._transport
            if current is not None and not current.failed and current.thread_id is not None:
                return current
            await self._join_cleanups()
            try:
                async with asyncio.timeout(self._startup_timeout):
                    return await self._start()
            except asyncio.CancelledError:
                raise
            except (TimeoutError, OSError, ComputerUseClientError) as error:
                await self._join_cleanups()  # no half-started process outlives the failure
                if isinstance(error, ComputerUseClientError) and error.category == "closed":
                    raise
                raise ComputerUseClientError("node-repl-unavailable") from error

    async def _start(self) -> Connection:
        epoch = self._epoch
        home = Path(tempfile.mkdtemp(prefix="pct-computer-use-", dir=self._temp_root))
        try:
            process = await asyncio.create_subprocess_exec(
                str(self._runtime.codex_path),
                *self._args,
                cwd=str(home),
                env={**self._env, "CODEX_HOME": str(home)},
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.DEVNULL,
                start_new_session=True,
                limit=MAX_LINE_BYTES,
            )
        except BaseException:
            shutil.rmtree(home, ignore_errors=True)
            raise
        transport = Connection(
            process,
            home,
            on_server_request=self._on_server_request,
            on_failed=self._on_failed,
            exit_grace=self._exit_grace,
        )
        self._transport = transport
        if self._closed or epoch != self._epoch:  # reset or closed while spawning
            transport.fail("closed")
            raise ComputerUseClientError("closed")
        budget = self._request_timeout
        try:
            await transport.request("initialize", self._initialize_params(), budget)
            transport.notify("initialized")
            started = await transport.request("thread/start", self._thread_params(home), budget)
            thread = started.get("thread") if isinstance(started, dict) else None
            thread_id = thread.get("id") if isinstance(thread, dict) else None
            if not isinstance(thread_id, str) or not thread_id:
                raise ComputerUseClientError("invalid-response")
            transport.thread_id = thread_id
            await self._wait_for_node_repl(transport)
        except BaseException:
            transport.fail("node-repl-unavailable")
            raise
        return transport

    def _initialize_params(self) -> JSONObject:
        return {
            "clientInfo": {"name": "pct", "title": "Pi Codex Toolkit", "version": version()},
            "capabilities": {
                "experimentalApi": True,
                "requestAttestation": False,
                "extensions": {"openai/form": {}},
            },
        }

    def _thread_params(self, home: Path) -> JSONObject:
        rt = self._runtime
        env = {
            "CODEX_HOME": str(home),
            "CODEX_CLI_PATH": str(rt.codex_path),
            "NODE_REPL_NODE_PATH": str(rt.node_path),
            "NODE_REPL_NODE_MODULE_DIRS": str(rt.node_modules_path),
            "NODE_REPL_TRUSTED_CODE_PATHS": f"{home}{os.pathsep}{rt.node_modules_path}",
            "NODE_REPL_TRUSTED_SERVICES": json.dumps({"sky": "@oai/sky/service"}),
            "NODE_REPL_NATIVE_PIPE_CONNECT_TIMEOUT_MS": "1000",
            "NODE_REPL_INSTRUCTIONS_USE_CASE_COMPUTER_USE": (
                "Control desktop apps on macOS through Computer Use."
            ),
            "SKY_CUA_SERVICE_PATH": str(rt.helper_path),
        }
        return {
            "cwd": str(home),
            "ephemeral": True,
            "sandbox": "read-only",
            "approvalPolicy": {
                "granular": {
                    "sandbox_approval": False,
                    "rules": False,
                    "skill_approval": False,
                    "request_permissions": False,
                    "mcp_elicitations": True,
                }
            },
            "config": {
                "mcp_servers": {
                    "node_repl": {
                        "command": str(rt.node_repl_path),
                        "args": [],
                        "startup_timeout_sec": max(1, round(self._startup_timeout)),
                        "enabled_tools": ["js"],
                        "env": env,
                    }
                }
            },
        }

    async def _wait_for_node_repl(self, transport: Connection) -> None:
        """Poll `mcpServerStatus/list` until `node_repl` is connected with tool `js`."""
        while True:
            cursor: str | None = None
            while True:
                response = await transport.request(
                    "mcpServerStatus/list",
                    {
                        "threadId": transport.thread_id,
                        "detail": "toolsAndAuthOnly",
                        "cursor": cursor,
                    },
                    self._request_timeout,
                )
                data = response.get("data") if isinstance(response, dict) else None
                if not isinstance(data, list):
                    raise ComputerUseClientError("invalid-response")
                for entry in data:
                    if not isinstance(entry, dict) or entry.get("name") != "node_repl":
                        continue
                    status = entry.get("runtimeStatus")
                    tools = entry.get("tools")
                    if status == "connected" and isinstance(tools, dict) and "js" in tools:
                        return
                    if status in _TERMINAL_STATUSES:
                        raise ComputerUseClientError("node-repl-unavailable")
                next_cursor = response.get("nextCursor") if isinstance(response, dict) else None
                if not isinstance(next_cursor, str) or not next_cursor:
                    break
                cursor = next_cursor
            await asyncio.sleep(self._poll_interval)

    # ----------------------------------------------------------------- requests

    async def _call_node_repl(
        self,
        transport: Connection,
        code: str,
        title: str,
        js_timeout: float,
        *,
        unknown_on_failure: bool = False,
        invocation: _Invocation | None = None,
        total: bool = False,
    ) -> list[object]:
        budget = js_timeout if total else min(self._request_timeout, js_timeout + 10.0)
        response = await transport.request(
            "mcpServer/tool/call",
            {
                "threadId": transport.thread_id,
                "server": "node_repl",
                "tool": "js",
                "arguments": {"code": code, "title": title, "timeout_ms": round(js_timeout * 1000)},
            },
            budget,
            unknown_on_failure=unknown_on_failure,
            on_id=(lambda rid: setattr(invocation, "request_id", rid)) if invocation else None,
        )
        if not isinstance(response, dict):
            raise ComputerUseClientError("invalid-response", unknown_outcome=unknown_on_failure)
        if response.get("isError") is True:
            raise ComputerUseClientError("mcp-error", detail=first_text(response.get("content")))
        content = response.get("content")
        if not isinstance(content, list):
            raise ComputerUseClientError("invalid-response", unknown_outcome=unknown_on_failure)
        return content

    def _on_server_request(
        self, connection: Connection, request_id: int | str, method: str, params: object
    ) -> None:
        if method != ELICITATION_METHOD:
            error = {"code": -32601, "message": "Unsupported request"}
            connection.write({"id": request_id, "error": error})
            return
        invocation = self._invocation
        if invocation is not None and invocation.connection is not connection:
            invocation = None
        task = asyncio.get_running_loop().create_task(
            self._answer_elicitation(connection, invocation, request_id, params)
        )
        connection.track(task)
        if invocation is not None:
            invocation.tasks.add(task)
            task.add_done_callback(invocation.tasks.discard)

    async def _answer_elicitation(
        self,
        connection: Connection,
        invocation: _Invocation | None,
        request_id: int | str,
        params: object,
    ) -> None:
        live = invocation is not None and invocation.active
        valid = validate_elicitation(params, thread_id=connection.thread_id) if live else None
        outcome = ApprovalOutcome(DECLINE)
        if invocation is not None and valid is not None:
            release = connection.pause(invocation.request_id)
            try:
                outcome = await decide_elicitation(
                    valid, mode=self._approval_mode, memory=self._memory, ui=invocation.ui
                )
            except asyncio.CancelledError:
                raise
            except Exception:  # a broken UI is a No, never an accept
                outcome = ApprovalOutcome(DECLINE, app=valid.app)
            finally:
                release()
            if not (invocation.active and connection is self._transport and not connection.failed):
                outcome = ApprovalOutcome(DECLINE)  # the call is over: a late Yes grants nothing
            else:
                if outcome.remember and outcome.app is not None:
                    self._memory.remember(outcome.app)
                invocation.outcomes.append(outcome)
        if not connection.failed:
            connection.write({"id": request_id, "result": outcome.reply})

    # ----------------------------------------------------------------- teardown

    def _end_invocation(self, invocation: _Invocation) -> None:
        invocation.active = False
        for task in list(invocation.tasks):
            task.cancel()
        if self._invocation is invocation:
            self._invocation = None

    def _on_failed(self, connection: Connection, category: ClientErrorCategory) -> None:
        """A connection failed: forget it, end its call, dispose of it in the background."""
        if self._transport is connection:
            self._transport = None
        invocation = self._invocation
        if invocation is not None and invocation.connection is connection:
            self._end_invocation(invocation)
        task = asyncio.get_running_loop().create_task(connection.dispose())
        self._cleanups.add(task)
        task.add_done_callback(self._cleanups.discard)

    async def _join_cleanups(self) -> None:
        while self._cleanups:
            await asyncio.gather(*list(self._cleanups), return_exceptions=True)


def _explain_approval(
    error: ComputerUseClientError, invocation: _Invocation
) -> ComputerUseClientError:
    """A failed call after a declined approval is reported as the decline, not a crash."""
    if error.category != "mcp-error":
        return error
    for outcome in reversed(invocation.outcomes):
        if outcome.declined_by_user:
            return declined_error(outcome.app or "", outcome.answer)
        if outcome.ui_unavailable:
            return ComputerUseClientError("approval-unavailable", detail=outcome.app or "")
    return error
