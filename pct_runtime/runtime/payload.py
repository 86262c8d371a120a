"""The payload hooks of an `embedded` session: native Web Search and Remote Compaction.

Only an agent that embeds the runtime can let it edit provider requests, so these hooks
act only in `embedded` sessions (an `mcp` session gets its payload back unchanged and
`before_compact` answers None, "compact natively"). What they do follows the session's
committed decisions: native search is injected only when the Web Search decision is
active with the native backend; checkpoints are created and replayed only while Remote
Compaction is active for the current model.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

from pct_runtime.decide.decisions import Decision
from pct_runtime.decide.projection import ProjectionPlan
from pct_runtime.host.models import Model
from pct_runtime.host.session import SessionKind
from pct_runtime.runtime.contracts import RuntimeHost
from pct_runtime.runtime.services import SessionServices

if TYPE_CHECKING:
    from pct_runtime.capabilities.compaction.hook import RemoteCompaction
    from pct_runtime.capabilities.compaction.remote import (
        CompactionPreparation,
        CompactionResult,
    )
    from pct_runtime.capabilities.openai.routes import ResolvedRoute


class PayloadSession(Protocol):
    """What the payload hooks read of a `RuntimeSession` (which calls them with itself)."""

    @property
    def runtime(self) -> RuntimeHost: ...
    @property
    def kind(self) -> SessionKind: ...
    @property
    def closed(self) -> bool: ...
    @property
    def plan(self) -> ProjectionPlan | None: ...
    @property
    def model(self) -> Model | None: ...
    @property
    def services(self) -> SessionServices: ...


def _compaction(session: PayloadSession) -> RemoteCompaction:
    def make() -> RemoteCompaction:
        # Deferred: the OpenAI plumbing loads only for an embedded session that uses it.
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


def _decision_active(session: PayloadSession, capability: str) -> Decision | None:
    plan = session.plan
    if plan is None:
        return None
    decision = plan.decisions.get(capability)
    return decision if decision is not None and decision.effective == "active" else None


async def _current_route(session: PayloadSession) -> ResolvedRoute | None:
    # Deferred: the OpenAI plumbing loads only for an embedded session that uses it.
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
    session: PayloadSession, payload: object, *, newest_compaction_details: object = None
) -> object:
    """Checkpoint replay (Remote Compaction), then native search; never mutates `payload`."""
    if session.kind != "embedded" or session.closed:
        return payload
    # Deferred: the OpenAI plumbing loads only for an embedded session that uses it.
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


async def before_compact(
    session: PayloadSession, preparation: CompactionPreparation
) -> CompactionResult | None:
    """A `CompactionResult` that replaces the agent's own summary, or None (compact natively)."""
    if session.kind != "embedded" or session.closed:
        return None
    return await _compaction(session).before_compact(preparation)
