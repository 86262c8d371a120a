"""Shared builders for the decision-layer tests (plain data, no processes)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from pct_runtime.capabilities.table import CAPABILITIES
from pct_runtime.config import ToolkitConfig, parse_config
from pct_runtime.decide.projection import ProjectionInputs, ProjectionPlan, plan_projection
from pct_runtime.host.pi.credentials import ApiKeyCredential, Credentials, OAuthCredential
from pct_runtime.host.pi.model_registry import Model, ModelRegistry
from pct_runtime.host.pi.names import OWNED_TOOL_NAMES
from pct_runtime.host.pi.session import SessionKind
from pct_runtime.host.pi.tool_registry import RUNTIME_OWNER, ToolRegistry, ToolSnapshot

CODEX = Model(
    "openai-codex",
    "gpt-5.4",
    "openai-codex-responses",
    "https://chatgpt.com/backend-api",
    reasoning=True,
    input=("text", "image"),
)
OPENAI = Model(
    "openai",
    "gpt-5.4",
    "openai-responses",
    "https://api.openai.com/v1",
    reasoning=True,
    input=("text", "image"),
)
THIRD_PARTY = Model(
    "anthropic", "claude-sonnet-4-5", "anthropic-messages", "https://api.anthropic.com"
)
TEXT_ONLY = Model(
    "openai-codex",
    "gpt-5.3-codex-spark",
    "openai-codex-responses",
    "https://chatgpt.com/backend-api",
    reasoning=True,
)


def config(obj: dict[str, Any] | None = None) -> ToolkitConfig:
    return parse_config(obj or {})


def registry(codex: str | None = "oauth", openai: str | None = "api_key") -> ModelRegistry:
    stored: dict[str, ApiKeyCredential | OAuthCredential] = {}
    for provider, kind in (("openai-codex", codex), ("openai", openai)):
        if kind == "oauth":
            stored[provider] = OAuthCredential(provider, "token", "refresh", 0)
        elif kind == "api_key":
            stored[provider] = ApiKeyCredential(provider, "key")
    return ModelRegistry(ModelRegistry.builtin().all(), Credentials(stored, env={}))


def tools(
    foreign: Iterable[str] = (),
    allow: Iterable[str] | None = None,
    extra_foreign: Iterable[str] = (),
) -> ToolSnapshot:
    """Natives + every owned name; `foreign` names are won by another extension."""
    reg = ToolRegistry.with_natives(allowlist=allow)
    for name in OWNED_TOOL_NAMES:
        reg.register(name, RUNTIME_OWNER)
    for name in (*foreign, *extra_foreign):
        reg.register(name, "other-extension")
    return reg.snapshot()


def plan(
    cfg: dict[str, Any] | ToolkitConfig | None = None,
    *,
    model: Model | None = CODEX,
    reg: ModelRegistry | None = None,
    snapshot: ToolSnapshot | None = None,
    active: Iterable[str] | None = None,
    kind: SessionKind = "embedded",
    ui: bool = True,
    platform: str = "darwin",
    cu_reason: str | None = None,
    shell: bool = True,
    discovered: Iterable[str] = (),
    suppressed: Iterable[str] = (),
    host_admitted: Iterable[str] | None = None,
) -> ProjectionPlan:
    snap = snapshot if snapshot is not None else tools()
    conf = cfg if isinstance(cfg, ToolkitConfig) else config(cfg)
    return plan_projection(
        ProjectionInputs(
            config=conf,
            model=model,
            registry=reg if reg is not None else registry(),
            tools=snap,
            active=tuple(active) if active is not None else tuple(snap.names),
            session_kind=kind,
            ui_available=ui,
            discovered=frozenset(discovered),
            native_suppressed=frozenset(suppressed),
            platform=platform,
            host_reasons={"computer_use": cu_reason},
            shell_available=shell,
            host_admitted=None if host_admitted is None else frozenset(host_admitted),
        ),
        CAPABILITIES,
    )


def rules(*entries: tuple[str, str, bool, bool, bool], **other: Any) -> dict[str, Any]:
    return {
        "execution": {
            "version": 1,
            "rules": [
                {"id": i, "match": m, "patch": p, "shell": s, "code": c}
                for i, m, p, s, c in entries
            ],
        },
        **other,
    }
