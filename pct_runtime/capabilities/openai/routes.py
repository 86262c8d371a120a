"""The plain, already-resolved route an OpenAI executor is handed, and the fixed endpoints.

The decision layer picks a model and its credential; an executor only needs the result:
which provider/API/model, which credential kind, the token and the ChatGPT account id.
Keeping this a small dataclass keeps the executors independent of how decisions are made.
"""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import urlsplit

from pct_runtime.host.pi.credentials import CredentialKind as CredentialKind
from pct_runtime.host.pi.credentials import chatgpt_account_id
from pct_runtime.host.pi.endpoints import IMAGE_ENDPOINTS as IMAGE_ENDPOINTS
from pct_runtime.host.pi.endpoints import OFFICIAL_ROUTES
from pct_runtime.host.pi.endpoints import RESPONSES_ENDPOINTS as RESPONSES_ENDPOINTS
from pct_runtime.host.pi.endpoints import official_route_problem as official_route_problem


@dataclass(frozen=True)
class ResolvedRoute:
    """A model route with its credential, resolved (and refreshed) just before a request.

    `base_url` is the registry's base URL and is only *checked* (it must be official); the
    request always goes to the fixed endpoint for `credential_kind`. `token` is a secret:
    it is never logged, printed or included in any debug record. The ChatGPT account id is
    always taken from the token's claim (`account_id_from_token`), as Pi does.
    """

    provider: str
    api: str
    model_id: str
    base_url: str
    credential_kind: CredentialKind
    token: str

    def __repr__(self) -> str:  # never leak the token through a repr in a traceback
        return (
            f"ResolvedRoute(provider={self.provider!r}, api={self.api!r}, "
            f"model_id={self.model_id!r}, credential_kind={self.credential_kind!r})"
        )


def route_problem(route: ResolvedRoute) -> str | None:
    """Re-check a resolved route right before sending: official and credential-consistent."""
    problem = official_route_problem(route.provider, route.api, route.base_url)
    if problem is not None:
        return problem
    if OFFICIAL_ROUTES[route.provider].kind != route.credential_kind:
        return "credential-mismatch"
    if not route.token:
        return "missing-openai-auth"
    return None


def account_id_from_token(token: str) -> str | None:
    """The ChatGPT account id claim of a Codex OAuth access token (the host's decoder)."""
    return chatgpt_account_id(token)


def endpoint_host(url: str) -> str:
    """Only the host of an endpoint: the one piece of a URL debug output may carry."""
    return urlsplit(url).hostname or ""


class RouteUnavailable(Exception):
    """Raised by a route resolver when no usable route/credential exists right now.

    `reason` is a status reason code (for example `missing-openai-auth`); it is shown to
    the model inside the capability's "is unavailable: <reason>." message.
    """

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason
