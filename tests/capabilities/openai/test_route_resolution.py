"""Registry model + Pi credentials -> ResolvedRoute, and the structural official-route check."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from openai_fakes import FakeServer, LoopbackTransport, codex_token, json_reply  # type: ignore[import-not-found]

from pct_runtime.capabilities.openai.resolve import resolve_model_route
from pct_runtime.capabilities.openai.routes import RouteUnavailable, official_route_problem
from pct_runtime.decide.routes import inspect_official_route
from pct_runtime.host.pi.credentials import Credentials
from pct_runtime.host.pi.model_registry import Model

CODEX = Model(
    "openai-codex", "gpt-5.4", "openai-codex-responses", "https://chatgpt.com/backend-api"
)
OPENAI = Model("openai", "gpt-5.4", "openai-responses", "https://api.openai.com/v1")


@pytest.mark.parametrize(
    ("provider", "api", "base", "problem"),
    [
        ("openai", "openai-responses", "https://api.openai.com/v1", None),
        ("openai", "openai-responses", "https://api.openai.com/v1/", None),
        ("openai", "openai-responses", "https://api.openai.com/v1/responses", None),
        ("openai-codex", "openai-codex-responses", "https://chatgpt.com/backend-api", None),
        ("openai-codex", "openai-codex-responses", "https://chatgpt.com/backend-api/codex", None),
        (
            "openai-codex",
            "openai-codex-responses",
            "https://chatgpt.com/backend-api/codex/responses",
            None,
        ),
        ("anthropic", "anthropic-messages", "https://api.anthropic.com", "unsupported-provider"),
        ("openai", "openai-completions", "https://api.openai.com/v1", "unsupported-api"),
        ("openai-codex", "openai-responses", "https://chatgpt.com/backend-api", "unsupported-api"),
        ("openai", "openai-responses", "http://api.openai.com/v1", "unofficial-endpoint"),
        ("openai", "openai-responses", "https://api.openai.com:443/v1", None),
        ("openai", "openai-responses", "https://api.openai.com:8443/v1", "unofficial-endpoint"),
        ("openai", "openai-responses", "https://API.OPENAI.COM/v1", None),
        ("openai", "openai-responses", "https://api.openai.com/x/../v1", None),
        ("openai", "openai-responses", "https://u:p@api.openai.com/v1", "unofficial-endpoint"),
        ("openai", "openai-responses", "https://api.openai.com/v1?x=1", "unofficial-endpoint"),
        ("openai", "openai-responses", "https://api.openai.com/v1#f", "unofficial-endpoint"),
        ("openai", "openai-responses", "https://api.openai.com.evil.io/v1", "unofficial-endpoint"),
        ("openai", "openai-responses", "https://proxy.example/v1", "unofficial-endpoint"),
        ("openai", "openai-responses", "https://api.openai.com/v2", "unofficial-endpoint"),
        ("openai", "openai-responses", "not a url", "unofficial-endpoint"),
        (
            "openai-codex",
            "openai-codex-responses",
            "https://chatgpt.com/api",
            "unofficial-endpoint",
        ),
    ],
)
def test_official_route_problem(provider: str, api: str, base: str, problem: str | None) -> None:
    assert official_route_problem(provider, api, base) == problem
    # the executor-side recheck and the decision layer must never disagree
    inspection = inspect_official_route(Model(provider, "m", api, base))
    assert (inspection.reason if not inspection.ok else None) == problem


def write_auth(agent: Path, data: dict[str, object]) -> None:
    (agent / "auth.json").write_text(json.dumps(data))


async def test_codex_model_gets_a_refreshed_token(
    tmp_path: Path, fake: FakeServer, loopback: LoopbackTransport
) -> None:
    fresh = codex_token("acct-r")
    write_auth(
        tmp_path,
        {"openai-codex": {"type": "oauth", "access": "old", "refresh": "rt", "expires": 1}},
    )
    fake.script(
        "/oauth/token",
        json_reply({"access_token": fresh, "refresh_token": "rt2", "expires_in": 60}),
    )
    creds = Credentials.load(tmp_path, env={})
    route = await resolve_model_route(CODEX, creds, tmp_path, oauth_transport=loopback)
    assert route.token == fresh
    assert route.credential_kind == "codex-oauth"
    assert fresh not in repr(route)


async def test_api_key_model_from_environment(tmp_path: Path) -> None:
    creds = Credentials.load(tmp_path, env={"OPENAI_API_KEY": "sk-env"})
    route = await resolve_model_route(OPENAI, creds, tmp_path)
    assert route.token == "sk-env"
    assert route.credential_kind == "api-key"


async def test_unavailable_reasons(tmp_path: Path) -> None:
    empty = Credentials.load(tmp_path, env={})
    with pytest.raises(RouteUnavailable) as info:
        await resolve_model_route(OPENAI, empty, tmp_path)
    assert info.value.reason == "missing-openai-auth"
    proxied = Model("openai", "gpt-5.4", "openai-responses", "https://proxy.example/v1")
    with pytest.raises(RouteUnavailable) as info:
        await resolve_model_route(proxied, empty, tmp_path)
    assert info.value.reason == "unofficial-endpoint"
    # an API key stored for the Codex provider is the wrong credential kind
    write_auth(tmp_path, {"openai-codex": {"type": "api_key", "key": "sk-x"}})
    with pytest.raises(RouteUnavailable) as info:
        await resolve_model_route(CODEX, Credentials.load(tmp_path, env={}), tmp_path)
    assert info.value.reason == "credential-mismatch"
