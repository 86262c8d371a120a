"""The embedder hooks of Remote Compaction: `before_compact` and request-time replay.

An agent that embeds the runtime calls `before_compact(preparation)` where Pi would emit
`session_before_compact`: a `CompactionResult` replaces its own summarization, None means
"compact natively" (feature off, custom instructions, no eligible route or account claim,
or any remote failure — never retried). Before each provider request it calls
`before_provider_request(payload, newest_details=..., route=...)`, which replays the
newest checkpoint only when it is enabled and the route is identical.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING

from pct_runtime.capabilities.compaction.remote import (
    FEATURE,
    CompactionPreparation,
    CompactionResult,
    RemoteCompactionError,
    compatibility_for,
    create_checkpoint,
    replay_checkpoint,
)
from pct_runtime.capabilities.openai.routes import ResolvedRoute, RouteUnavailable, route_problem
from pct_runtime.debug import DISABLED, DebugRecord, DebugSink

if TYPE_CHECKING:  # annotations only: httpx (and the rich it loads) is imported on first use
    import httpx

RouteResolver = Callable[[], Awaitable[ResolvedRoute]]


class RemoteCompaction:
    """`resolve_route` returns the current model's route with a *refreshed* OAuth token,
    or raises `RouteUnavailable(reason)`; `enabled` reads `remoteCompaction.enabled`."""

    def __init__(
        self,
        *,
        enabled: Callable[[], bool],
        resolve_route: RouteResolver,
        debug: DebugSink = DISABLED,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        self._enabled = enabled
        self._resolve_route = resolve_route
        self._debug = debug
        self._transport = transport

    def _fallback(self, reason: str, route: ResolvedRoute | None = None) -> None:
        self._debug.emit(
            DebugRecord(
                feature=FEATURE,
                outcome="native-fallback",
                provider=route.provider if route else None,
                api=route.api if route else None,
                model=route.model_id if route else None,
                reason=reason,
            )
        )

    async def before_compact(self, prep: CompactionPreparation) -> CompactionResult | None:
        if not self._enabled():
            self._fallback("disabled")
            return None
        if prep.custom_instructions:
            self._fallback("custom-instructions")  # custom instructions always go native
            return None
        try:
            route = await self._resolve_route()
        except RouteUnavailable as exc:
            self._fallback(exc.reason)
            return None
        problem = route_problem(route)
        if problem is not None:
            self._fallback(problem, route)
            return None
        if route.credential_kind != "codex-oauth":
            self._fallback("unsupported-provider", route)
            return None
        if compatibility_for(route) is None:
            self._fallback("missing-account-claim", route)
            return None
        try:
            result = await create_checkpoint(
                prep, route, transport=self._transport, debug=self._debug
            )
        except RemoteCompactionError:
            return None  # already recorded as remote-failure; Pi compacts natively
        if result is None:
            self._fallback("preparation-unavailable", route)
        return result

    def before_provider_request(
        self, payload: object, *, newest_details: object, route: ResolvedRoute | None
    ) -> object:
        """Replay the newest compaction entry's checkpoint into `payload` when compatible.

        `newest_details` is the `details` of the newest compaction entry on the branch;
        `route` is the route this request goes to (None when not an official route).
        """
        if not self._enabled() or route is None or route_problem(route) is not None:
            return payload
        identity = compatibility_for(route)
        return replay_checkpoint(payload, newest_details, identity[0] if identity else None)
