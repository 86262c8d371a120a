"""The shared event bus: named channels with synchronous fan-out to subscribers.

Diagnostics records, debug metadata and runtime state changes are published here; the
console and the MCP server subscribe. A failing subscriber never breaks the publisher.
"""

from __future__ import annotations

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
