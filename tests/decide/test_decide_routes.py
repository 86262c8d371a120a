"""Official routes: URL rules, API/provider precedence, credential kinds, executors."""

from __future__ import annotations

from dataclasses import dataclass, replace

import pytest
from decide_fixtures import CODEX, OPENAI

from pct_runtime.decide.routes import (
    check_refreshed_route,
    image_generation_endpoint,
    inspect_current_native_route,
    inspect_image_executor,
    inspect_official_route,
    inspect_remote_compaction_route,
    inspect_sidecar_executor,
    sidecar_candidates,
    sidecar_efforts,
)
from pct_runtime.host.pi.credentials import ApiKeyCredential, Credentials, OAuthCredential
from pct_runtime.host.pi.model_registry import Model, ModelRegistry


@dataclass(frozen=True)
class Ref:
    provider: str
    model: str
    thinking_level: str = "auto"


def registry(
    *,
    codex: str | None = "oauth",
    openai: str | None = "api_key",
    models: list[Model] | None = None,
) -> ModelRegistry:
    stored: dict[str, ApiKeyCredential | OAuthCredential] = {}
    for provider, kind in (("openai-codex", codex), ("openai", openai)):
        if kind == "oauth":
            stored[provider] = OAuthCredential(provider, "a", "r", 0)
        elif kind == "api_key":
            stored[provider] = ApiKeyCredential(provider, "k")
    base = ModelRegistry.builtin()
    return ModelRegistry(models if models is not None else base.all(), Credentials(stored, env={}))


@pytest.mark.parametrize(
    ("url", "ok"),
    [
        ("https://api.openai.com/v1", True),
        ("https://api.openai.com/v1/", True),
        ("https://api.openai.com/v1///", True),
        ("https://api.openai.com/v1/responses", True),
        ("https://API.OPENAI.COM/v1", True),
        ("https://api.openai.com:443/v1", True),
        ("https://api.openai.com/x/../v1", True),
        ("https://api.openai.com:8443/v1", False),
        ("https://api.openai.com:0/v1", False),
        ("https://api.openai.com:abc/v1", False),
        ("http://api.openai.com/v1", False),
        ("https://user@api.openai.com/v1", False),
        ("https://user:pw@api.openai.com/v1", False),
        ("https://api.openai.com/v1?x=1", False),
        ("https://api.openai.com/v1#frag", False),
        ("https://api.openai.com", False),
        ("https://api.openai.com/", False),
        ("https://api.openai.com/v2", False),
        ("https://api.openai.com/v1/chat", False),
        ("https://api.openai.com//v1", False),
        ("https://api.openai.com./v1", False),
        ("https://api.openai.com.evil.example/v1", False),
        ("https://evil.example/api.openai.com/v1", False),
        ("https://api.openai.com\\v1", False),
        (" https://api.openai.com/v1", False),
        ("not a url", False),
        ("", False),
    ],
)
def test_openai_urls(url: str, ok: bool) -> None:
    result = inspect_official_route(replace(OPENAI, base_url=url))
    assert result.ok is ok
    if ok:
        assert result.kind == "api-key"
        assert result.endpoint == "https://api.openai.com/v1/responses"
    else:
        assert result.reason == "unofficial-endpoint"


@pytest.mark.parametrize(
    ("url", "ok"),
    [
        ("https://chatgpt.com/backend-api", True),
        ("https://chatgpt.com/backend-api/codex", True),
        ("https://chatgpt.com/backend-api/codex/responses/", True),
        ("https://chatgpt.com/backend-api/codex/other", False),
        ("https://chatgpt.com/v1", False),
        ("https://www.chatgpt.com/backend-api", False),
        ("https://chatgpt.com:444/backend-api", False),
        ("https://chatgpt.com/backend-api?q", False),
        ("https://api.openai.com/v1", False),
    ],
)
def test_codex_urls(url: str, ok: bool) -> None:
    result = inspect_official_route(replace(CODEX, base_url=url))
    assert result.ok is ok
    assert result.kind == ("codex-oauth" if ok else None)


@pytest.mark.parametrize(
    ("model", "reason"),
    [
        (replace(OPENAI, provider="anthropic"), "unsupported-provider"),
        (replace(OPENAI, provider="my-proxy"), "unsupported-provider"),
        (replace(OPENAI, api="openai-completions"), "unsupported-api"),
        (replace(OPENAI, api="openai-codex-responses"), "unsupported-api"),
        (replace(CODEX, api="openai-responses"), "unsupported-api"),
        # API is checked before the endpoint.
        (replace(CODEX, api="openai-responses", base_url="http://x"), "unsupported-api"),
        (replace(OPENAI, base_url="https://proxy.example/v1"), "unofficial-endpoint"),
    ],
)
def test_route_reason_precedence(model: Model, reason: str) -> None:
    assert inspect_official_route(model).reason == reason


@pytest.mark.parametrize(
    ("model", "codex", "openai", "reason"),
    [
        (CODEX, "oauth", None, None),
        (CODEX, "api_key", None, "credential-mismatch"),  # API key on chatgpt.com
        (OPENAI, None, "api_key", None),
        (OPENAI, None, "oauth", "credential-mismatch"),  # OAuth on api.openai.com
        (None, "oauth", "api_key", "unsupported-provider"),
    ],
)
def test_native_route_credential_kind(
    model: Model | None, codex: str | None, openai: str | None, reason: str | None
) -> None:
    result = inspect_current_native_route(model, registry(codex=codex, openai=openai))
    assert result.reason == reason


def test_remote_compaction_needs_codex_oauth() -> None:
    reg = registry()
    assert inspect_remote_compaction_route(CODEX, reg).ok
    assert inspect_remote_compaction_route(OPENAI, reg).reason == "unsupported-provider"
    assert (
        inspect_remote_compaction_route(replace(CODEX, base_url="https://x"), reg).reason
        == "unofficial-endpoint"
    )


@pytest.mark.parametrize(
    ("ref", "codex", "openai", "reason"),
    [
        (None, "oauth", "api_key", "missing-sidecar-model"),
        (Ref("openai-codex", "gpt-5.4-mini"), "oauth", "api_key", "missing-sidecar-model"),
        (Ref("openai-codex", "gpt-5.4"), "api_key", "api_key", "credential-mismatch"),
        (Ref("openai-codex", "gpt-5.4", "minimal"), "oauth", None, None),
        (Ref("openai-codex", "gpt-5.4", "max"), "oauth", None, "unsupported-sidecar-effort"),
        (Ref("openai-codex", "gpt-5.1", "xhigh"), "oauth", None, "unsupported-sidecar-effort"),
        (Ref("openai", "gpt-5.4", "low"), None, "api_key", "unsupported-sidecar-effort"),
        (Ref("openai", "gpt-5.4"), None, "api_key", None),
        (Ref("openai", "gpt-5.4"), "oauth", None, "missing-openai-auth"),
        # No Codex login at all names the fix, not a kind mismatch.
        (Ref("openai-codex", "gpt-5.4"), None, None, "missing-openai-auth"),
    ],
)
def test_sidecar_executor(
    ref: Ref | None, codex: str | None, openai: str | None, reason: str | None
) -> None:
    result = inspect_sidecar_executor(ref, registry(codex=codex, openai=openai))
    assert result.reason == reason
    assert result.ok is (reason is None)


def test_sidecar_executor_route_reasons_come_from_registry_model() -> None:
    moved = replace(CODEX, base_url="https://proxy.example")
    reg = registry(models=[moved])
    assert (
        inspect_sidecar_executor(Ref("openai-codex", "gpt-5.4"), reg).reason
        == "unofficial-endpoint"
    )


def test_image_executor_order() -> None:
    # Current official route wins.
    assert inspect_image_executor(OPENAI, registry()).kind == "api-key"
    # A third-party current model falls back to Codex OAuth, then API key.
    other = Model("anthropic", "claude", "anthropic-messages", "https://api.anthropic.com")
    assert inspect_image_executor(other, registry()).kind == "codex-oauth"
    assert inspect_image_executor(other, registry(codex=None)).kind == "api-key"
    assert (
        inspect_image_executor(other, registry(codex=None, openai=None)).reason
        == "missing-openai-auth"
    )
    # A failing current route keeps its reason when nothing else qualifies.
    bad = replace(OPENAI, base_url="https://proxy.example/v1")
    reg = ModelRegistry([bad], Credentials({"openai": ApiKeyCredential("openai", "k")}, env={}))
    assert inspect_image_executor(bad, reg).reason == "unofficial-endpoint"
    # Credential mismatch for every candidate.
    assert (
        inspect_image_executor(other, registry(codex="api_key", openai="oauth")).reason
        == "credential-mismatch"
    )


def test_refreshed_route_checks() -> None:
    assert check_refreshed_route(CODEX, None, True).ok
    assert check_refreshed_route(CODEX, "https://chatgpt.com/backend-api/codex", True).ok
    assert (
        check_refreshed_route(CODEX, "https://api.openai.com/v1", True).reason
        == "unofficial-endpoint"
    )
    moved = check_refreshed_route(OPENAI, "https://api.openai.com/v1/responses", True)
    assert moved.reason == "credential-mismatch"
    assert (
        check_refreshed_route(OPENAI, "https://proxy.example/v1", False).reason
        == "unofficial-endpoint"
    )


def test_image_endpoints_are_constants() -> None:
    assert image_generation_endpoint("api-key") == "https://api.openai.com/v1/images/generations"
    assert (
        image_generation_endpoint("codex-oauth")
        == "https://chatgpt.com/backend-api/codex/images/generations"
    )


def test_sidecar_candidates_and_efforts() -> None:
    reg = registry(codex="oauth", openai=None)
    keys = [m.key for m in sidecar_candidates(reg)]
    assert "openai-codex/gpt-5.4" in keys
    assert all(k.startswith("openai-codex/") for k in keys)
    codex_51 = reg.find("openai-codex", "gpt-5.1")
    assert codex_51 is not None
    assert [m.key for m in sidecar_candidates(reg, [codex_51])] == ["openai-codex/gpt-5.1"]
    # Credential kind must match the route: an API key stored for Codex offers nothing there.
    assert sidecar_candidates(registry(codex="api_key", openai=None)) == []
    moved = ModelRegistry(
        [replace(CODEX, base_url="https://proxy.example")],
        Credentials({"openai-codex": OAuthCredential("openai-codex", "a", "r", 0)}, env={}),
    )
    assert sidecar_candidates(moved) == []
    assert sidecar_efforts(OPENAI) == ("auto",)
    assert sidecar_efforts(CODEX) == ("auto", "off", "minimal", "low", "medium", "high", "xhigh")
