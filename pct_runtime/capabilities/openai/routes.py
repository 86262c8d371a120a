"""The plain, already-resolved route an OpenAI executor is handed, and the fixed endpoints.

The decision layer picks a model and its credential; an executor only needs the result:
which provider/API/model, which credential kind, the token and the ChatGPT account id.
Keeping this a small dataclass keeps the executors independent of how decisions are made.
"""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import urlsplit

from pct_runtime.host.credentials import CredentialKind as CredentialKind
from pct_runtime.host.credentials import chatgpt_account_id

RESPONSES_ENDPOINTS: dict[CredentialKind, str] = {
    "api-key": "https://api.openai.com/v1/responses",
    "codex-oauth": "https://chatgpt.com/backend-api/codex/responses",
}
IMAGE_ENDPOINTS: dict[CredentialKind, str] = {
    "api-key": "https://api.openai.com/v1/images/generations",
    "codex-oauth": "https://chatgpt.com/backend-api/codex/images/generations",
}

_OFFICIAL: dict[str, tuple[str, str, tuple[str, ...], CredentialKind]] = {
    # provider -> (api, host, allowed base paths, credential kind)
    "openai": ("openai-responses", "api.openai.com", ("/v1", "/v1/responses"), "api-key"),
    "openai-codex": (
        "openai-codex-responses",
        "chatgpt.com",
        ("/backend-api", "/backend-api/codex", "/backend-api/codex/responses"),
        "codex-oauth",
    ),
}


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


def _normalized_path(path: str) -> str:
    """The path as a URL parser sees it: dot segments resolved, trailing `/` dropped."""
    out: list[str] = []
    for segment in path.split("/")[1:] if path.startswith("/") else path.split("/"):
        if segment == ".":
            continue
        if segment == "..":
            if out:
                out.pop()
            continue
        out.append(segment)
    return ("/" + "/".join(out)).rstrip("/") or "/"


def _is_official_url(base_url: str, host: str, paths: tuple[str, ...]) -> bool:
    """`https:` to exactly `host` (`:443` allowed), no user info, query or fragment.

    Must agree with the decision layer's check (a test compares them), so that a route
    the status calls active is never refused here, and vice versa.
    """
    if any(ch.isspace() or ch == "\\" for ch in base_url):
        return False
    try:
        parts = urlsplit(base_url)
        port = parts.port
    except ValueError:
        return False
    if parts.scheme.lower() != "https" or "@" in parts.netloc:
        return False
    if (parts.hostname or "") != host or (port is not None and port != 443):
        return False
    if parts.query or parts.fragment:
        return False
    return _normalized_path(parts.path) in paths


def official_route_problem(provider: str, api: str, base_url: str) -> str | None:
    """Why a (provider, api, base_url) is not an official OpenAI/Codex Responses route.

    Returns a status reason code (`unsupported-provider`, `unsupported-api`,
    `unofficial-endpoint`) or None when the route is official. Rejects plain HTTP, ports,
    userinfo, queries, fragments, lookalike hosts and any path outside the allowed set.
    """
    entry = _OFFICIAL.get(provider)
    if entry is None:
        return "unsupported-provider"
    want_api, host, paths, _kind = entry
    if api != want_api:
        return "unsupported-api"
    if not _is_official_url(base_url, host, paths):
        return "unofficial-endpoint"
    return None


def route_problem(route: ResolvedRoute) -> str | None:
    """Re-check a resolved route right before sending: official and credential-consistent."""
    problem = official_route_problem(route.provider, route.api, route.base_url)
    if problem is not None:
        return problem
    if _OFFICIAL[route.provider][3] != route.credential_kind:
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
