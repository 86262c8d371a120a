"""The MCP server: a low-level `mcp.server.Server` in front of runtime sessions.

One runtime session per MCP connection (stdio has exactly one; streamable HTTP has one
per `Mcp-Session-Id`; stateless 2026-07-28 requests share one, without the tools that keep
state between calls — see `stateless`). `tools/list` is the
session's current projection; `tools/call` runs through `RuntimeSession.call`, so gating,
invocation hooks and approvals are identical to the console and to embedders.

Result mapping: text (+ base64 images) → `content`, details → `_meta["pct/details"]`,
`ToolError` → `is_error` with the exact message and `_meta["pct/error"]`. No structured
content unless `pct serve --structured-content` asks for it: Codex CLI and Claude Code show
a result's structured content to the model in place of its text, and the text is what the
spec writes for the model. Long calls send progress: every record
the tool reports plus a heartbeat, which also keeps client time-outs from firing. MCP
cancellation cancels the handler, which reaches the executor as `CancelledError`.
"""

from __future__ import annotations

import asyncio
import base64
import json
import logging
from collections.abc import Mapping
from typing import TypeAlias

import anyio
import mcp_types as types
from mcp.server import NotificationOptions, Server
from mcp.server.connection import Connection
from mcp.server.context import ServerRequestContext
from mcp.server.models import InitializationOptions
from mcp.server.session import ServerSession
from mcp.server.subscriptions import InMemorySubscriptionBus, ListenHandler, ToolsListChanged
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from pct_runtime.capabilities.base import ToolError, ToolResult, ToolSpec
from pct_runtime.journal.recorder import CallOrigin
from pct_runtime.jsontypes import JSONMapping, JSONObject
from pct_runtime.runtime import Runtime, RuntimeSession
from pct_runtime.serve.mcp.elicitation import ConnectionElicitationUI, ElicitationUI
from pct_runtime.serve.mcp.stateless import SESSION_BOUND_TOOLS, session_required
from pct_runtime.version import version

_log = logging.getLogger(__name__)

_SESSION_KEY = "pct.session"
_LOCK_KEY = "pct.session.lock"

#: Seconds between heartbeat progress notifications while a call runs.
DEFAULT_HEARTBEAT_SECONDS = 5.0
#: Longest progress message we send (records are compact JSON of names and numbers).
_PROGRESS_MESSAGE_LIMIT = 512

INSTRUCTIONS = (
    "pct serves Codex-grade coding tools (apply_patch, exec_command/write_stdin, exec/wait and "
    "more, as configured). Tools that are not enabled answer with an error saying so."
)


#: The SDK's default lifespan state (an empty dict); pct keeps none of its own there.
Lifespan: TypeAlias = dict[str, object]
#: The SDK's per-request context; pct reads no lifespan or transport request from it.
RequestContext: TypeAlias = ServerRequestContext[Lifespan, object]


class _PctServer(Server[Lifespan]):
    """A low-level server that always advertises `tools.listChanged`.

    The in-memory test transport and some runners call `create_initialization_options()`
    without arguments; the override makes the advertisement unconditional.
    """

    def create_initialization_options(
        self,
        notification_options: NotificationOptions | None = None,
        experimental_capabilities: dict[str, JSONObject] | None = None,
        extensions: dict[str, JSONObject] | None = None,
    ) -> InitializationOptions:
        return super().create_initialization_options(
            notification_options or NotificationOptions(tools_changed=True),
            experimental_capabilities,
            extensions,
        )


def _connection_of(ctx: RequestContext) -> Connection:
    # The SDK hands handlers a per-request `ServerSession` proxy; the connection it holds is
    # the stable per-client object (with `state` and a shielded `exit_stack`). mcp 2.3 has
    # no public accessor from `ServerRequestContext`, so read it here, in one place.
    connection: Connection = ctx.session._connection
    return connection


def tool_to_mcp(spec: ToolSpec) -> types.Tool:
    """A `ToolSpec` as an MCP `Tool` (JSON Schema input, label as title, meta passed through)."""
    return types.Tool(
        name=spec.name,
        title=spec.label,
        description=spec.description,
        input_schema=dict(spec.input_schema),
        _meta=dict(spec.meta) if spec.meta else None,
    )


#: `_meta` key carrying a successful call's details (snake_case keys, one spelling each).
DETAILS_META_KEY = "pct/details"


def result_to_mcp(result: ToolResult, *, structured_content: bool = False) -> types.CallToolResult:
    """The text (and images) as `content`; the details in `_meta`.

    `structured_content` (the `--structured-content` opt-in) also sends the details as
    `structuredContent` for programmatic clients; agents then read JSON instead of the text.
    """
    content: list[types.ContentBlock] = [types.TextContent(type="text", text=result.text)]
    for image in result.images:
        content.append(
            types.ImageContent(
                type="image",
                data=base64.b64encode(image.data).decode("ascii"),
                mime_type=image.mime_type,
            )
        )
    details = dict(result.details)
    return types.CallToolResult(
        content=content,
        structured_content=details if structured_content else None,
        is_error=False,
        _meta={DETAILS_META_KEY: details},
    )


#: `_meta` key carrying a failed call's machine-readable code (and details, when any).
ERROR_META_KEY = "pct/error"


def error_to_mcp(error: ToolError) -> types.CallToolResult:
    """`is_error` with the exact message as the only content.

    No structured content: clients such as Codex show the model structured content in
    preference to text, and the model must read the exact error text. The code travels in
    `_meta` for programs.
    """
    meta: JSONObject = {"code": error.code}
    if error.details:
        meta["details"] = dict(error.details)
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=error.message)],
        is_error=True,
        _meta={ERROR_META_KEY: meta},
    )


def _progress_message(record: JSONMapping) -> str:
    try:
        text = json.dumps(dict(record), separators=(",", ":"), ensure_ascii=False, default=str)
    except (TypeError, ValueError):
        text = str(dict(record))
    if len(text) > _PROGRESS_MESSAGE_LIMIT:
        text = text[: _PROGRESS_MESSAGE_LIMIT - 1] + "…"
    return text


def _wants_progress(ctx: RequestContext) -> bool:
    meta = ctx.meta
    if not meta:
        return False
    raw: JSONMapping = meta
    return raw.get("progress_token") is not None or raw.get("progressToken") is not None


class PctMCPServer:
    """Binds an MCP `Server` to a `Runtime`.

    `single_session` (stdio) makes every request use that one session; otherwise each
    handshake connection gets its own session, closed when the connection ends.
    """

    def __init__(
        self,
        runtime: Runtime,
        *,
        single_session: RuntimeSession | None = None,
        heartbeat_seconds: float = DEFAULT_HEARTBEAT_SECONDS,
        name: str = "pct",
        structured_content: bool = False,
    ) -> None:
        self.runtime = runtime
        self.structured_content = structured_content
        self.heartbeat_seconds = heartbeat_seconds
        self._single = single_session
        #: The journal's transport name: stdio serves one session, HTTP one per connection.
        self.transport = "stdio" if single_session is not None else "http"
        self._modern: RuntimeSession | None = None
        self._modern_lock = asyncio.Lock()
        self._bus = InMemorySubscriptionBus()
        self._connections: dict[str, set[Connection]] = {}
        self._tasks: set[asyncio.Task[object]] = set()
        self.server: Server[Lifespan] = _PctServer(
            name,
            version=version(),
            title="Pi Codex Toolkit",
            instructions=INSTRUCTIONS,
            on_list_tools=self._on_list_tools,
            on_call_tool=self._on_call_tool,
            on_subscriptions_listen=ListenHandler(self._bus),
        )
        if single_session is not None:
            single_session.subscribe(self._on_projection_changed)

    # ----------------------------------------------------------------- sessions
    async def session_for(self, ctx: RequestContext) -> RuntimeSession:
        if ctx.protocol_version in MODERN_PROTOCOL_VERSIONS:
            return await self._modern_session()
        connection = _connection_of(ctx)
        if self._single is not None:
            known = self._connections.setdefault(self._single.id, set())
            if connection not in known:
                known.add(connection)
                self._single.set_fallback_ui(ConnectionElicitationUI(connection))
                connection.exit_stack.callback(known.discard, connection)
                await self._single.sync()
            return self._single
        existing = connection.state.get(_SESSION_KEY)
        if isinstance(existing, RuntimeSession):
            return existing
        lock: asyncio.Lock = connection.state.setdefault(_LOCK_KEY, asyncio.Lock())
        async with lock:
            existing = connection.state.get(_SESSION_KEY)
            if isinstance(existing, RuntimeSession):
                return existing
            session = await self.runtime.open_session("mcp", ui=ConnectionElicitationUI(connection))
            connection.state[_SESSION_KEY] = session
            self._connections[session.id] = {connection}
            session.subscribe(self._on_projection_changed)

            async def _end() -> None:
                self._connections.pop(session.id, None)
                await session.close()

            connection.exit_stack.push_async_callback(_end)
            return session

    async def _modern_session(self) -> RuntimeSession:
        if self._single is not None:
            return self._single
        async with self._modern_lock:
            if self._modern is None or self._modern.closed:
                self._modern = await self.runtime.open_session("mcp")
                self._modern.subscribe(self._on_projection_changed)
            return self._modern

    async def aclose(self) -> None:
        """Close the shared stateless session (connection sessions close with their connection)."""
        if self._modern is not None:
            await self._modern.close()
        for task in list(self._tasks):
            task.cancel()

    def _on_projection_changed(self, session: RuntimeSession) -> None:
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return
        task = loop.create_task(self._announce(session))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _announce(self, session: RuntimeSession) -> None:
        for connection in list(self._connections.get(session.id, ())):
            await connection.send_tool_list_changed()
        if session is self._modern or session is self._single:
            await self._bus.publish(ToolsListChanged())

    # ----------------------------------------------------------------- handlers
    async def _on_list_tools(
        self, ctx: RequestContext, params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        session = await self.session_for(ctx)
        specs = session.tool_specs()
        if self._shared_stateless(ctx):
            specs = [spec for spec in specs if spec.name not in SESSION_BOUND_TOOLS]
        return types.ListToolsResult(tools=[tool_to_mcp(spec) for spec in specs])

    def _shared_stateless(self, ctx: RequestContext) -> bool:
        """Clients on the stateless revision share one session (stdio has one client)."""
        return self._single is None and ctx.protocol_version in MODERN_PROTOCOL_VERSIONS

    async def _on_call_tool(
        self, ctx: RequestContext, params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        name = params.name
        if name in SESSION_BOUND_TOOLS and self._shared_stateless(ctx):
            return error_to_mcp(session_required(name, str(ctx.protocol_version)))
        session = await self.session_for(ctx)
        arguments = params.arguments
        if arguments is not None and not isinstance(arguments, Mapping):
            return error_to_mcp(
                ToolError("invalid-arguments", f"{name} arguments must be a JSON object.")
            )
        ui = ElicitationUI(ctx.session, ctx.request_id)
        queue: asyncio.Queue[JSONMapping] | None = asyncio.Queue() if _wants_progress(ctx) else None
        pump: asyncio.Task[None] | None = None
        if queue is not None:
            pump = asyncio.create_task(self._pump_progress(ctx.session, queue))

        def sink(record: JSONMapping) -> None:
            if queue is not None:
                queue.put_nowait(record)

        try:
            result = await session.call(
                name,
                arguments,
                tool_call_id=f"mcp-{ctx.request_id}",
                progress=sink if queue is not None else None,
                ui=ui,
                origin=CallOrigin(self.transport, ui.client_name, ui.client_version),
            )
        except ToolError as error:
            return error_to_mcp(error)
        except Exception as exc:  # an executor bug must not take the connection down
            _log.exception("tool %s raised", name)
            return error_to_mcp(
                ToolError(
                    "internal-error", f"{name} failed unexpectedly: {type(exc).__name__}: {exc}"
                )
            )
        finally:
            if pump is not None:
                pump.cancel()
                with anyio.CancelScope(shield=True):
                    await asyncio.gather(pump, return_exceptions=True)
        return result_to_mcp(result, structured_content=self.structured_content)

    async def _pump_progress(
        self, session: ServerSession, queue: asyncio.Queue[JSONMapping]
    ) -> None:
        """Forward tool progress records; send a heartbeat when the tool is quiet."""
        count = 0
        while True:
            try:
                record = await asyncio.wait_for(queue.get(), timeout=self.heartbeat_seconds)
                message = _progress_message(record)
            except TimeoutError:
                message = "running"
            count += 1
            try:
                await session.report_progress(count, None, message)
            except Exception:
                _log.debug("progress notification dropped", exc_info=True)
                return
