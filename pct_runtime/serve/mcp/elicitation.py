"""The UI port over MCP form elicitation, for when no console is attached.

Used only when the client declared the `elicitation` capability on a handshake-era
connection (the 2026-07-28 era forbids server-initiated requests). A decline, a cancel or
a transport failure is a "no": nothing is approved by default.

`ElicitationUI` asks on a tool call's own request stream (on streamable HTTP the question
rides that POST's response); `ConnectionElicitationUI` asks on the connection's standalone
channel and serves as a session's port between calls.
"""

from __future__ import annotations

import logging
import time

import mcp_types as types
from mcp.server.connection import Connection
from mcp.server.session import ServerSession
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from pct_runtime.host.ui import NotifyLevel, Question, note_answer
from pct_runtime.jsontypes import JSONObject

_log = logging.getLogger(__name__)

_CONFIRM_FIELD = "approve"
_SELECT_FIELD = "choice"
#: An answer faster than this came from the client itself: no person reads an approval
#: question and answers it within a quarter second (`codex exec` declines in ~2 ms).
AUTOMATIC_ANSWER_SECONDS = 0.25


def _declares_elicitation(protocol_version: str, caps: types.ClientCapabilities | None) -> bool:
    if protocol_version in MODERN_PROTOCOL_VERSIONS:
        return False
    return caps is not None and caps.elicitation is not None


def client_supports_elicitation(session: ServerSession) -> bool:
    return _declares_elicitation(session.protocol_version, session.client_capabilities)


def _info(params: object, key: str) -> str | None:
    value = getattr(getattr(params, "client_info", None), key, None)
    return value if isinstance(value, str) else None


class _FormUI:
    """confirm/select as flat form elicitations; subclasses say how to send one."""

    transport_name = "elicitation"

    async def _send(self, message: str, schema: JSONObject) -> types.ElicitResult:
        raise NotImplementedError

    async def _ask(self, message: str, schema: JSONObject) -> JSONObject | None:
        started = time.monotonic()
        try:
            result = await self._send(message, schema)
        except Exception:
            _log.warning("elicitation failed; treating it as a refusal", exc_info=True)
            note_answer(action="failed")
            return None
        elapsed = time.monotonic() - started
        note_answer(
            action=result.action,
            automatic=elapsed < AUTOMATIC_ANSWER_SECONDS,
            elapsed_ms=round(elapsed * 1000),
        )
        if result.action != "accept" or result.content is None:
            return None
        return dict(result.content)

    async def confirm(self, question: Question) -> bool:
        title = question.title
        schema = {
            "type": "object",
            "properties": {
                _CONFIRM_FIELD: {"type": "boolean", "title": "Approve", "description": title},
            },
            "required": [_CONFIRM_FIELD],
        }
        content = await self._ask(f"{title}\n\n{question.message}", schema)
        return bool(content and content.get(_CONFIRM_FIELD) is True)

    async def select(self, question: Question) -> str | None:
        title, options = question.title, question.options
        message = f"{title}\n\n{question.message}" if question.message else title
        schema = {
            "type": "object",
            "properties": {
                _SELECT_FIELD: {"type": "string", "title": title, "enum": list(options)}
            },
            "required": [_SELECT_FIELD],
        }
        content = await self._ask(message, schema)
        if not content:
            return None
        choice = content.get(_SELECT_FIELD)
        return choice if isinstance(choice, str) and choice in options else None

    def notify(self, message: str, level: NotifyLevel = "info") -> None:
        _log.info("notify (%s): %s", level, message)


class ElicitationUI(_FormUI):
    """Asks through `elicitation/create` related to one tool call's request."""

    def __init__(self, session: ServerSession, related_request_id: types.RequestId | None) -> None:
        self._session = session
        self._request_id = related_request_id

    @property
    def client_name(self) -> str | None:
        return _info(getattr(self._session, "client_params", None), "name")

    @property
    def client_version(self) -> str | None:
        return _info(getattr(self._session, "client_params", None), "version")

    @property
    def available(self) -> bool:
        return client_supports_elicitation(self._session) and self._session.can_send_request

    async def _send(self, message: str, schema: JSONObject) -> types.ElicitResult:
        return await self._session.elicit_form(message, schema, related_request_id=self._request_id)


class ConnectionElicitationUI(_FormUI):
    """Asks on a connection's standalone channel; its availability is the session's."""

    def __init__(self, connection: Connection) -> None:
        self._connection = connection

    @property
    def client_name(self) -> str | None:
        """`clientInfo.name` from the handshake (shown by the console when it asks)."""
        return _info(self._connection.client_params, "name")

    @property
    def client_version(self) -> str | None:
        """`clientInfo.version` from the handshake (shown by live consoles)."""
        return _info(self._connection.client_params, "version")

    @property
    def available(self) -> bool:
        c = self._connection
        return c.has_standalone_channel and _declares_elicitation(
            c.protocol_version, c.client_capabilities
        )

    async def _send(self, message: str, schema: JSONObject) -> types.ElicitResult:
        request = types.ElicitRequest(
            params=types.ElicitRequestFormParams(message=message, requested_schema=schema)
        )
        return await self._connection.send_request(request)
