"""Builders for the runtime-level Tool Discovery tests: a real `Runtime` over a temp agent
dir, with stand-in tools for the capabilities this runtime does not wire itself (Web
Search, Image Generation, Computer Use) registered under the runtime's own identity."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from pct_runtime.capabilities.base import CallContext, Tool, ToolResult, ToolSpec
from pct_runtime.host.pi.credentials import ApiKeyCredential, Credentials, OAuthCredential
from pct_runtime.host.pi.model_registry import Model, ModelRegistry
from pct_runtime.host.pi.names import COMPUTER_USE_TOOLS, IMAGE_GENERATION_TOOL, WEB_SEARCH_TOOL
from pct_runtime.host.ui import Question
from pct_runtime.runtime import CapabilityBinding, Runtime, RuntimeSession, default_bindings

CODEX = Model(
    "openai-codex",
    "gpt-5.4",
    "openai-codex-responses",
    "https://chatgpt.com/backend-api",
    reasoning=True,
    input=("text", "image"),
)
OTHER = Model("anthropic", "claude-sonnet-4-5", "anthropic-messages", "https://api.anthropic.com")

CU = COMPUTER_USE_TOOLS


class EchoTool:
    """A stand-in tool that says it ran (no executor behind it)."""

    def __init__(self, name: str, description: str = "") -> None:
        self._spec = ToolSpec(
            name,
            name,
            description or f"Stand-in for {name}.",
            {"type": "object", "properties": {}, "additionalProperties": False},
        )

    @property
    def spec(self) -> ToolSpec:
        return self._spec

    async def __call__(self, args: Mapping[str, Any], ctx: CallContext) -> ToolResult:
        return ToolResult(f"{self._spec.name} ran")


class DialogUI:
    """An interactive UI that approves everything (Computer Use needs one)."""

    @property
    def available(self) -> bool:
        return True

    async def confirm(self, question: Question) -> bool:
        return True

    async def select(self, question: Question) -> str | None:
        return question.options[0] if question.options else None

    def notify(self, message: str, level: Any = "info") -> None:
        return None


def stand_in_bindings() -> list[CapabilityBinding]:
    def one(capability: str, names: tuple[str, ...]) -> CapabilityBinding:
        return CapabilityBinding(capability, names, lambda s: [EchoTool(n) for n in names])

    return [
        one("web_search", (WEB_SEARCH_TOOL,)),
        one("image_generation", (IMAGE_GENERATION_TOOL,)),
        one("computer_use", CU),
    ]


def bindings() -> list[CapabilityBinding]:
    """The runtime's real bindings, with stand-ins replacing Web Search, Image Generation
    and Computer Use (whose real executors would reach the network or ChatGPT.app)."""
    stand_ins = stand_in_bindings()
    replaced = {name for binding in stand_ins for name in binding.names}
    real = [b for b in default_bindings() if not set(b.names) & replaced]
    return [*real, *stand_ins]


def registry(with_credentials: bool = True) -> ModelRegistry:
    stored: dict[str, ApiKeyCredential | OAuthCredential] = {}
    if with_credentials:
        stored["openai-codex"] = OAuthCredential("openai-codex", "token", "refresh", 0)
        stored["openai"] = ApiKeyCredential("openai", "key")
    return ModelRegistry(ModelRegistry.builtin().all(), Credentials(stored, env={}))


def write_config(root: Path, obj: Mapping[str, Any]) -> None:
    ext = root / "agent" / "extensions"
    ext.mkdir(parents=True, exist_ok=True)
    (ext / "pi-codex-toolkit.json").write_text(json.dumps(obj), encoding="utf-8")


def discovery(deferred: Iterable[str], **other: Any) -> dict[str, Any]:
    return {"toolDiscovery": {"enabled": True, "deferred": list(deferred)}, **other}


async def make_runtime(
    root: Path,
    cfg: Mapping[str, Any],
    *,
    extra_tools: Sequence[Tool] = (),
    allowlist: Sequence[str] | None = None,
    platform: str = "linux",
    credentials: bool = True,
) -> Runtime:
    write_config(root, cfg)
    work = root / "work"
    work.mkdir(exist_ok=True)
    runtime = Runtime(
        agent_dir=root / "agent",
        cwd=work,
        bindings=bindings(),
        extra_tools=extra_tools,
        allowlist=allowlist,
        platform=platform,
    )
    await runtime.start()
    runtime.models = registry(credentials)
    return runtime


async def open_one(
    root: Path,
    cfg: Mapping[str, Any],
    *,
    model: Model | None = CODEX,
    ui: Any = None,
    kind: Any = "mcp",
    **kw: Any,
) -> tuple[Runtime, RuntimeSession]:
    runtime = await make_runtime(root, cfg, **kw)
    session = await runtime.open_session(kind, model=model, ui=ui)
    return runtime, session


async def find(session: RuntimeSession, **args: Any) -> str:
    return (await session.call("find_tools", args)).text
