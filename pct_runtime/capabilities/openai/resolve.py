"""Turn a registry model into a `ResolvedRoute` with a usable credential, per call.

This is the glue the runtime hands to the OpenAI tools as their `resolve_route`: Pi's
resolution order for the provider's credential, an `openai-codex` OAuth token refreshed
(under Pi's lock) when expired, and the structural route check repeated right before the
request. Every failure is a `RouteUnavailable` with a status reason code; a Codex login
whose refresh failed is `provider-unavailable`, never `missing-openai-auth`.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import TYPE_CHECKING

from pct_runtime.capabilities.openai.routes import (
    CredentialKind,
    ResolvedRoute,
    RouteUnavailable,
    official_route_problem,
)
from pct_runtime.host.pi.credentials import Credentials
from pct_runtime.host.pi.model_registry import Model
from pct_runtime.host.pi.oauth import CODEX_PROVIDER, OAuthRefreshError, fresh_codex_credential

if TYPE_CHECKING:  # annotations only: httpx (and the rich it loads) is imported on first use
    import httpx

_KINDS: dict[str, CredentialKind] = {"openai": "api-key", CODEX_PROVIDER: "codex-oauth"}


def refresh_failure_reason(category: str) -> str:
    """The status reason for a failed Codex OAuth refresh (`OAuthRefreshError.category`).

    Only a missing (or unreadable) credential is `missing-openai-auth`: logging in fixes
    that. A user who has a login whose refresh failed (offline, token endpoint 5xx or a bad
    answer, Pi's `auth.json.lock` held, `auth.json` not writable) gets
    `provider-unavailable`, which says to retry rather than log in; a
    refreshed token without the ChatGPT account claim gets `missing-account-claim`.
    """
    if category == "missing-credential":
        return "missing-openai-auth"
    if category == "missing-account-claim":
        return "missing-account-claim"
    return "provider-unavailable"


async def resolve_model_route(
    model: Model,
    credentials: Credentials,
    agent_dir: Path,
    *,
    oauth_transport: httpx.AsyncBaseTransport | None = None,
) -> ResolvedRoute:
    """The model's official route with a fresh credential, or `RouteUnavailable(reason)`."""
    problem = official_route_problem(model.provider, model.api, model.base_url)
    if problem is not None:
        raise RouteUnavailable(problem)
    kind = _KINDS[model.provider]
    if credentials.get(model.provider) is None:
        # Nothing to mismatch: the fix is to log in or set a key, so say that.
        raise RouteUnavailable("missing-openai-auth")
    uses_oauth = credentials.is_using_oauth(model.provider)
    if (kind == "codex-oauth") != uses_oauth:
        raise RouteUnavailable("credential-mismatch")
    if kind == "codex-oauth":
        try:
            credential = await fresh_codex_credential(agent_dir, transport=oauth_transport)
        except OAuthRefreshError as error:
            raise RouteUnavailable(refresh_failure_reason(error.category)) from None
        token = credential.access
    else:
        resolved = await asyncio.to_thread(credentials.resolve_api_key, model.provider)
        if not resolved:
            raise RouteUnavailable("missing-openai-auth")
        token = resolved
    return ResolvedRoute(
        provider=model.provider,
        api=model.api,
        model_id=model.id,
        base_url=model.base_url,
        credential_kind=kind,
        token=token,
    )
