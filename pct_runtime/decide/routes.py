"""Official OpenAI routes: which models may carry credentials and payload changes.

Pure structural checks on the URL, no network: API keys go only to
`https://api.openai.com/v1/...`, Codex OAuth only to `https://chatgpt.com/backend-api/...`.
HTTP, user info, explicit non-default ports, queries, fragments, look-alike hosts and
gateway paths are all `unofficial-endpoint`. This is not a generic SSRF framework.
"""

from __future__ import annotations

from typing import Protocol

from pct_runtime.datarecord import datarecord, replace
from pct_runtime.host.pi.credentials import CredentialKind
from pct_runtime.host.pi.endpoints import (
    IMAGE_ENDPOINTS,
    OFFICIAL_ROUTES,
    RESPONSES_ENDPOINTS,
    official_route_problem,
)
from pct_runtime.host.pi.model_registry import Model, supported_thinking_levels


class RouteRegistry(Protocol):
    """What route checks need from the model registry."""

    def find(self, provider: str, model_id: str) -> Model | None: ...
    def available(self) -> list[Model]: ...
    def is_using_oauth(self, model: Model) -> bool: ...


class ModelReference(Protocol):
    """The sidecar model setting: provider, model id, thinking level (`auto` or a level)."""

    @property
    def provider(self) -> str: ...
    @property
    def model(self) -> str: ...
    @property
    def thinking_level(self) -> str: ...


@datarecord
class RouteInspection:
    """ok with the route kind and fixed Responses endpoint, or not ok with a reason."""

    ok: bool
    reason: str | None = None
    kind: CredentialKind | None = None
    endpoint: str | None = None
    model: Model | None = None

    @classmethod
    def fail(cls, reason: str) -> RouteInspection:
        return cls(False, reason)


def inspect_official_route(model: Model) -> RouteInspection:
    """Provider, then API, then endpoint: the first failing check names the reason."""
    problem = official_route_problem(model.provider, model.api, model.base_url)
    if problem is not None:
        return RouteInspection.fail(problem)
    kind = OFFICIAL_ROUTES[model.provider].kind
    return RouteInspection(True, kind=kind, endpoint=RESPONSES_ENDPOINTS[kind], model=model)


def _credential_matches(inspection: RouteInspection, model: Model, registry: RouteRegistry) -> bool:
    return (inspection.kind == "codex-oauth") == registry.is_using_oauth(model)


def _has_credential(model: Model, registry: RouteRegistry) -> bool:
    """Pi's `getAvailable()`: the provider has some credential (auth.json, env, models.json)."""
    return any(_same(m, model.provider, model.id) for m in registry.available())


def _credential_problem(
    inspection: RouteInspection, model: Model, registry: RouteRegistry
) -> str | None:
    """No credential at all names the fix (log in / set a key); a wrong kind is a mismatch.

    Pi's `isUsingOAuth` is false without any credential, so checking the kind first would
    call a missing Codex login a `credential-mismatch` and send the user the wrong way.
    """
    if not _has_credential(model, registry):
        return "missing-openai-auth"
    if not _credential_matches(inspection, model, registry):
        return "credential-mismatch"
    return None


def inspect_current_native_route(model: Model | None, registry: RouteRegistry) -> RouteInspection:
    """The current model as a native route: official, then a credential of the route's kind."""
    if model is None:
        return RouteInspection.fail("unsupported-provider")
    inspection = inspect_official_route(model)
    if not inspection.ok:
        return inspection
    problem = _credential_problem(inspection, model, registry)
    return RouteInspection.fail(problem) if problem else inspection


def inspect_remote_compaction_route(
    model: Model | None, registry: RouteRegistry
) -> RouteInspection:
    """Remote Compaction needs the official Codex OAuth route; an API-key route is unsupported.

    An API-key route stays `unsupported-provider` with or without a key (a key cannot fix
    it); with a credential present the toolkit's order holds (kind mismatch first).
    """
    if model is not None and not _has_credential(model, registry):
        route = inspect_official_route(model)
        if route.ok and route.kind != "codex-oauth":
            return RouteInspection.fail("unsupported-provider")
    inspection = inspect_current_native_route(model, registry)
    if not inspection.ok:
        return inspection
    if inspection.kind != "codex-oauth":
        return RouteInspection.fail("unsupported-provider")
    return inspection


def supports_sidecar_effort(reference: ModelReference, model: Model, kind: CredentialKind) -> bool:
    """`auto` always; a level only on the Codex route and only if the model supports it."""
    if reference.thinking_level == "auto":
        return True
    return kind == "codex-oauth" and reference.thinking_level in supported_thinking_levels(model)


def _same(model: Model, provider: str, model_id: str) -> bool:
    return model.provider == provider and model.id == model_id


def inspect_sidecar_executor(
    reference: ModelReference | None, registry: RouteRegistry
) -> RouteInspection:
    """missing-sidecar-model → route → missing-openai-auth → credential-mismatch → effort."""
    if reference is None:
        return RouteInspection.fail("missing-sidecar-model")
    model = registry.find(reference.provider, reference.model)
    if model is None:
        return RouteInspection.fail("missing-sidecar-model")
    inspection = inspect_official_route(model)
    if not inspection.ok:
        return inspection
    problem = _credential_problem(inspection, model, registry)
    if problem:
        return RouteInspection.fail(problem)
    assert inspection.kind is not None
    if not supports_sidecar_effort(reference, model, inspection.kind):
        return RouteInspection.fail("unsupported-sidecar-effort")
    return inspection


def _image_candidate(model: Model, registry: RouteRegistry) -> RouteInspection:
    inspection = inspect_official_route(model)
    if not inspection.ok:
        return inspection
    if not _credential_matches(inspection, model, registry):
        return RouteInspection.fail("credential-mismatch")
    return inspection


def inspect_image_executor(current: Model | None, registry: RouteRegistry) -> RouteInspection:
    """Current model's official route → any `openai-codex` → any `openai`; first failure wins.

    With no candidate at all the reason is `missing-openai-auth`: a third-party current
    model is expected to fall back to an OpenAI credential, so its `unsupported-provider`
    does not name the fix (log in or set `OPENAI_API_KEY`) and is never the reason.
    """
    available = registry.available()
    first_reason: str | None = None
    if current is not None and any(_same(m, current.provider, current.id) for m in available):
        inspection = _image_candidate(current, registry)
        if inspection.ok:
            return inspection
        if inspection.reason != "unsupported-provider":
            first_reason = inspection.reason
    candidates = [m for m in available if m.provider == "openai-codex"] + [
        m for m in available if m.provider == "openai"
    ]
    seen: set[tuple[str, str]] = set()
    if current is not None:
        seen.add((current.provider, current.id))
    for model in candidates:
        if (model.provider, model.id) in seen:
            continue
        seen.add((model.provider, model.id))
        inspection = _image_candidate(model, registry)
        if inspection.ok:
            return inspection
        first_reason = first_reason or inspection.reason
    return RouteInspection.fail(first_reason or "missing-openai-auth")


def check_refreshed_route(
    model: Model, refreshed_base_url: str | None, uses_oauth: bool
) -> RouteInspection:
    """Re-check a route after auth resolution (which may move the base URL).

    A refreshed credential that moves the request to the other route kind, or a
    credential kind that disagrees with the route, is `credential-mismatch`.
    """
    initial = inspect_official_route(model)
    if not initial.ok:
        return initial
    routed = model if not refreshed_base_url else _with_base(model, refreshed_base_url)
    resolved = inspect_official_route(routed)
    if not resolved.ok:
        return resolved
    if resolved.kind != initial.kind or (resolved.kind == "codex-oauth") != uses_oauth:
        return RouteInspection.fail("credential-mismatch")
    return RouteInspection(True, kind=resolved.kind, endpoint=resolved.endpoint, model=model)


def _with_base(model: Model, base_url: str) -> Model:
    return replace(model, base_url=base_url)


def image_generation_endpoint(kind: CredentialKind) -> str:
    return IMAGE_ENDPOINTS[kind]


def sidecar_candidates(registry: RouteRegistry, scoped: list[Model] | None = None) -> list[Model]:
    """Models `/pct config` may offer as the Web Search executor.

    Available models on an official OpenAI/Codex Responses route whose credential kind
    matches the route; a non-empty Pi scoped-model list (`enabledModels`) filters them too.
    Nothing is guessed: no "latest" or "cheapest", no id allowlist.
    """
    scope = {(m.provider, m.id) for m in scoped} if scoped else None
    out: list[Model] = []
    for model in registry.available():
        if scope is not None and (model.provider, model.id) not in scope:
            continue
        inspection = inspect_official_route(model)
        if inspection.ok and _credential_matches(inspection, model, registry):
            out.append(model)
    return out


def sidecar_efforts(model: Model) -> tuple[str, ...]:
    """The executor effort menu: `auto`, plus the model's thinking levels on the Codex route
    (the API-key route supports only `auto`)."""
    if model.provider != "openai-codex":
        return ("auto",)
    return ("auto", *supported_thinking_levels(model))
