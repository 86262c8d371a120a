"""The shared event bus: named channels with synchronous fan-out to subscribers.

Diagnostics records, debug metadata and runtime state changes are published here; the
console and the MCP server subscribe. A failing subscriber never breaks the publisher.
"""

from __future__ import annotations

import json
import logging
from collections import defaultdict
from collections.abc import Callable

EXECUTION_DIAGNOSTICS_CHANNEL = "pi-codex-toolkit.execution-diagnostics"

Handler = Callable[[object], None]
_log = logging.getLogger(__name__)


class EventBus:
    def __init__(self) -> None:
        self._subscribers: dict[str, list[Handler]] = defaultdict(list)

    def subscribe(self, channel: str, handler: Handler) -> Callable[[], None]:
        """Subscribe; returns a function that unsubscribes (idempotent)."""
        self._subscribers[channel].append(handler)

        def unsubscribe() -> None:
            handlers = self._subscribers.get(channel, [])
            if handler in handlers:
                handlers.remove(handler)

        return unsubscribe

    def publish(self, channel: str, payload: object) -> None:
        for handler in list(self._subscribers.get(channel, ())):
            try:
                handler(payload)
            except Exception:  # a broken subscriber must not break the runtime
                _log.exception("event subscriber failed on channel %s", channel)


#: The diagnostics fields an operator reads in an event line, in this order.
_DIAGNOSTICS_KEYS = (
    "model",
    "source",
    "ruleId",
    "effective",
    "approvalTransport",
    "cleanupPending",
)


def runtime_event_text(payload: dict[str, object]) -> str:
    """A runtime event as one operator-readable line (`<type> key=value …`): the same text in
    the console's own Events screen and in what live control sends other consoles."""
    kind = str(payload.get("type", "event"))
    details = " ".join(f"{k}={_short(v)}" for k, v in payload.items() if k != "type")
    return f"{kind} {details}".rstrip()


def diagnostics_text(payload: dict[str, object]) -> str:
    """An execution diagnostics record as one line (its routing facts, the visible count)."""
    text = " ".join(f"{k}={_short(payload[k])}" for k in _DIAGNOSTICS_KEYS if k in payload)
    visible = payload.get("visibleNames")
    if isinstance(visible, list):
        text += f" visible={len(visible)}"
    return text


def _short(value: object) -> str:
    if isinstance(value, list | tuple):
        return "+".join(str(v) for v in value) or "none"
    if value is None:
        return "—"
    if isinstance(value, dict):
        if all(isinstance(v, bool) for v in value.values()):
            return "+".join(k for k, v in value.items() if v) or "none"
        return json.dumps(value, separators=(",", ":"))
    return str(value)
