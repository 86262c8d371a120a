"""`ElicitationUI`: the UI port over MCP form elicitation, for when no console is attached.

Used only when the client declared the `elicitation` capability on a handshake-era
connection (the 2026-07-28 era forbids server-initiated requests). A decline, a cancel or
a transport failure is a "no": nothing is approved by default.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

import mcp_types as types
from mcp.server.session import ServerSession
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from pct_runtime.host.ui import NotifyLevel

_log = logging.getLogger(__name__)

_CONFIRM_FIELD = "approve"
_SELECT_FIELD = "choice"


def client_supports_elicitation(session: ServerSession) -> bool:
    if session.protocol_version in MODERN_PROTOCOL_VERSIONS:
        return False
    caps = session.client_capabilities
    return caps is not None and caps.elicitation is not None


class ElicitationUI:
    """Asks the attached MCP client's user through `elicitation/create` (form mode)."""

    transport_name = "elicitation"

    def __init__(self, session: ServerSession, related_request_id: types.RequestId | None) -> None:
        self._session = session
        self._request_id = related_request_id

    @property
    def available(self) -> bool:
        return client_supports_elicitation(self._session) and self._session.can_send_request

    async def _ask(self, message: str, schema: dict[str, Any]) -> dict[str, Any] | None:
        try:
            result = await self._session.elicit_form(
                message, schema, related_request_id=self._request_id
            )
        except Exception:
            _log.warning("elicitation failed; treating it as a refusal", exc_info=True)
            return None
        if result.action != "accept" or result.content is None:
            return None
        return dict(result.content)

    async def confirm(self, title: str, message: str) -> bool:
        schema = {
            "type": "object",
            "properties": {
                _CONFIRM_FIELD: {"type": "boolean", "title": "Approve", "description": title},
            },
            "required": [_CONFIRM_FIELD],
        }
        content = await self._ask(f"{title}\n\n{message}", schema)
        return bool(content and content.get(_CONFIRM_FIELD) is True)

    async def select(self, title: str, options: Sequence[str]) -> str | None:
        schema = {
            "type": "object",
            "properties": {
                _SELECT_FIELD: {"type": "string", "title": title, "enum": list(options)}
            },
            "required": [_SELECT_FIELD],
        }
        content = await self._ask(title, schema)
        if not content:
            return None
        choice = content.get(_SELECT_FIELD)
        return choice if isinstance(choice, str) and choice in options else None

    def notify(self, message: str, level: NotifyLevel = "info") -> None:
        _log.info("notify (%s): %s", level, message)
