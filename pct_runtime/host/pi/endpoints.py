"""The official OpenAI routes: which base URLs may carry credentials, and the fixed endpoints.

One definition for the decision layer (status, projection) and the executors (the re-check
right before a request), so a route that status calls active is never refused at send time,
nor the reverse. API keys go only to `https://api.openai.com/v1/...`, Codex OAuth only to
`https://chatgpt.com/backend-api/...`; HTTP, user info, explicit non-default ports, queries,
fragments, look-alike hosts and gateway paths are all unofficial. Not a generic SSRF framework.
"""

from __future__ import annotations

from urllib.parse import urlsplit

from pct_runtime.datarecord import datarecord
from pct_runtime.host.pi.credentials import CredentialKind

API_KEY_HOST = "api.openai.com"
CODEX_HOST = "chatgpt.com"
OPENAI_PATHS: tuple[str, ...] = ("/v1", "/v1/responses")
CODEX_PATHS: tuple[str, ...] = (
    "/backend-api",
    "/backend-api/codex",
    "/backend-api/codex/responses",
)
RESPONSES_ENDPOINTS: dict[CredentialKind, str] = {
    "api-key": "https://api.openai.com/v1/responses",
    "codex-oauth": "https://chatgpt.com/backend-api/codex/responses",
}
IMAGE_ENDPOINTS: dict[CredentialKind, str] = {
    "api-key": "https://api.openai.com/v1/images/generations",
    "codex-oauth": "https://chatgpt.com/backend-api/codex/images/generations",
}


@datarecord
class OfficialRoute:
    """What makes a provider's route official: its Responses API, host, base paths, kind."""

    api: str
    host: str
    paths: tuple[str, ...]
    kind: CredentialKind


OFFICIAL_ROUTES: dict[str, OfficialRoute] = {
    "openai": OfficialRoute("openai-responses", API_KEY_HOST, OPENAI_PATHS, "api-key"),
    "openai-codex": OfficialRoute("openai-codex-responses", CODEX_HOST, CODEX_PATHS, "codex-oauth"),
}


def _normalized_path(path: str) -> str:
    """The path as a URL parser sees it: dot segments resolved, trailing `/` dropped."""
    out: list[str] = []
    segments = path.split("/")[1:] if path.startswith("/") else path.split("/")
    for segment in segments:
        if segment == ".":
            continue
        if segment == "..":
            if out:
                out.pop()
            continue
        out.append(segment)
    return ("/" + "/".join(out)).rstrip("/") or "/"


def is_official_url(base_url: str, host: str, paths: tuple[str, ...]) -> bool:
    """`https:` to exactly `host`, no user info/port/query/fragment, path in `paths`.

    An explicit default port (`:443`) is the same origin and is accepted; every other port
    is not. Whitespace and backslashes are rejected outright.
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
    if (parts.hostname or "") != host:
        return False
    if port is not None and port != 443:
        return False
    if parts.query or parts.fragment:
        return False
    return _normalized_path(parts.path) in paths


def official_route_problem(provider: str, api: str, base_url: str) -> str | None:
    """Why (provider, api, base_url) is not an official Responses route, or None when it is.

    Provider, then API, then endpoint: the first failing check names the status reason
    (`unsupported-provider`, `unsupported-api`, `unofficial-endpoint`).
    """
    route = OFFICIAL_ROUTES.get(provider)
    if route is None:
        return "unsupported-provider"
    if api != route.api:
        return "unsupported-api"
    if not is_official_url(base_url, route.host, route.paths):
        return "unofficial-endpoint"
    return None
