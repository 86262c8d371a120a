"""The payload hooks of an `embedded` session: native Web Search and Remote Compaction.

Only an agent that embeds the runtime can let it edit provider requests, so these hooks
act only in `embedded` sessions (an `mcp` session gets its payload back unchanged and
`before_compact` answers None, "compact natively"). What they do follows the session's
committed decisions: native search is injected only when the Web Search decision is
active with the native backend; checkpoints are created and replayed only while Remote
Compaction is active for the current model.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pct_runtime.capabilities.compaction.hook import RemoteCompaction
    from pct_runtime.capabilities.openai.routes import ResolvedRoute
    from pct_runtime.runtime_session import RuntimeSession


def _compaction(session: RuntimeSession) -> RemoteCompaction:
    def make() -> RemoteCompaction:
        from pct_runtime.capabilities.openai.factory import build_remote_compaction

        runtime = session.runtime
        return build_remote_compaction(
            config=lambda: runtime.config,
            current_model=lambda: session.model,
            registry=lambda: runtime.models,
            agent_dir=lambda: runtime.agent_dir,
            debug=runtime.debug,
        )

    return session.services.shared("remote_compaction", make)


def _decision_active(session: RuntimeSession, capability: str) -> Any:
    plan = session.plan
    if plan is None:
        return None
    decision = plan.decisions.get(capability)
    return decision if decision is not None and decision.effective == "active" else None


async def _current_route(session: RuntimeSession) -> ResolvedRoute | None:
    from pct_runtime.capabilities.openai.resolve import resolve_model_route
    from pct_runtime.capabilities.openai.routes import RouteUnavailable

    model = session.model
    if model is None:
        return None
    runtime = session.runtime
    try:
        return await resolve_model_route(model, runtime.models.credentials, runtime.agent_dir)
    except RouteUnavailable:
        return None


async def before_provider_request(
    session: RuntimeSession, payload: Any, *, newest_compaction_details: Any = None
) -> Any:
    """Checkpoint replay (Remote Compaction), then native search; never mutates `payload`."""
    if session.kind != "embedded" or session.closed:
        return payload
    from pct_runtime.capabilities.openai.pipeline import transform_provider_request

    search = _decision_active(session, "web_search")
    native = (
        session.runtime.config.web_search
        if search and search.effective_backend == "native"
        else None
    )
    compaction = None
    route = None
    if _decision_active(session, "remote_compaction") is not None and newest_compaction_details:
        compaction = _compaction(session)
        route = await _current_route(session)
    return transform_provider_request(
        payload,
        compaction=compaction,
        newest_compaction_details=newest_compaction_details,
        route=route,
        native_search=native,
    )


async def before_compact(session: RuntimeSession, preparation: Any) -> Any:
    """A `CompactionResult` that replaces the agent's own summary, or None (compact natively)."""
    if session.kind != "embedded" or session.closed:
        return None
    return await _compaction(session).before_compact(preparation)
