"""Turn a registry model into a `ResolvedRoute` with a usable credential, per call.

This is the glue the runtime hands to the OpenAI tools as their `resolve_route`: Pi's
resolution order for the provider's credential, an `openai-codex` OAuth token refreshed
(under Pi's lock) when expired, and the structural route check repeated right before the
request. Every failure is a `RouteUnavailable` with a status reason code.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import httpx

from pct_runtime.capabilities.openai.routes import (
    CredentialKind,
    ResolvedRoute,
    RouteUnavailable,
    official_route_problem,
)
from pct_runtime.host.credentials import Credentials
from pct_runtime.host.models import Model
from pct_runtime.host.oauth import CODEX_PROVIDER, OAuthRefreshError, fresh_codex_credential

_KINDS: dict[str, CredentialKind] = {"openai": "api-key", CODEX_PROVIDER: "codex-oauth"}


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
    uses_oauth = credentials.is_using_oauth(model.provider)
    if (kind == "codex-oauth") != uses_oauth:
        raise RouteUnavailable("credential-mismatch")
    if kind == "codex-oauth":
        try:
            credential = await fresh_codex_credential(agent_dir, transport=oauth_transport)
        except OAuthRefreshError:
            raise RouteUnavailable("missing-openai-auth") from None
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
