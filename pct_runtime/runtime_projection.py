"""The projection seam between the decision layer and the runtime.

The runtime asks one question of the decision layer: for this session (config, model,
kind, UI, allowlist), which tool names are visible, which are reachable only from inside
Code Mode cells, and what exact error does a call to a known but inactive name get? The
answer is a `Projection`; everything the MCP server and the console show comes from it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from pct_runtime.host import names

SessionKind = Literal["mcp", "embedded"]

#: Exact model-facing refusals for owned names (toolkit.md §3.6), by name.
INACTIVE_MESSAGES: Mapping[str, str] = {
    names.APPLY_PATCH_TOOL: "Apply Patch is not enabled.",
    **dict.fromkeys(names.SHELL_TOOLS, "Shell Sessions are not enabled."),
    **dict.fromkeys(names.CODE_MODE_TOOLS, "Code Mode is not enabled."),
    names.FIND_TOOLS_TOOL: "Tool discovery is not enabled.",
    **dict.fromkeys(
        names.COMPUTER_USE_TOOLS, "Computer Use is not active for the current session."
    ),
    names.WEB_SEARCH_TOOL: "OpenAI Web Search is not active for the current model.",
    names.IMAGE_GENERATION_TOOL: "OpenAI Image Generation is not active for the current model.",
}


@dataclass(frozen=True)
class ModelRef:
    """A `provider/id` pair. Model ids may contain `/`, so parsing splits at the first one."""

    provider: str
    id: str

    @classmethod
    def parse(cls, text: str) -> ModelRef:
        provider, sep, model_id = text.partition("/")
        if not sep or not provider or not model_id:
            raise ValueError(f"model must be PROVIDER/ID, got {text!r}")
        return cls(provider, model_id)

    def __str__(self) -> str:
        return f"{self.provider}/{self.id}"


@dataclass(frozen=True)
class Projection:
    """What one session exposes right now.

    `visible` is the `tools/list` answer in order; `nested_only` names are callable only
    from a Code Mode cell; `inactive` maps every other known name to the exact refusal a
    call gets. `diagnostics` is the decision layer's record (published on the event bus).
    """

    visible: tuple[str, ...] = ()
    nested_only: tuple[str, ...] = ()
    inactive: Mapping[str, str] = field(default_factory=dict)
    diagnostics: Mapping[str, Any] | None = None

    def admits(self, name: str, path: Literal["direct", "nested"]) -> bool:
        if name in self.visible:
            return True
        return path == "nested" and name in self.nested_only

    def refusal(self, name: str) -> str | None:
        """The exact text for a known but inactive name; None when the name is unknown."""
        return self.inactive.get(name)

    def same_surface(self, other: Projection) -> bool:
        """True when an agent would see no difference (drives `list_changed`)."""
        return self.visible == other.visible and self.nested_only == other.nested_only


@dataclass(frozen=True)
class PlanInputs:
    """Everything a planner may look at. `config` is a `ToolkitConfig`."""

    config: Any
    config_revision: str | None
    model: ModelRef | None
    kind: SessionKind
    ui_available: bool
    allowlist: frozenset[str] | None
    registered: tuple[str, ...]
    session_id: str


class ProjectionPlanner(Protocol):
    """Turns plan inputs into a projection. Pure; called on every sync."""

    def __call__(self, inputs: PlanInputs) -> Projection: ...


def legacy_flags_planner(inputs: PlanInputs) -> Projection:
    """The flags-only projection used until the decision layer's planner is plugged in.

    Each legacy switch activates its owned names when the runtime registered them and the
    host allowlist admits them; everything else known is refused with its own text.
    """
    config = inputs.config
    wanted: list[str] = []
    if getattr(getattr(config, "apply_patch", None), "enabled", False):
        wanted.append(names.APPLY_PATCH_TOOL)
    if getattr(getattr(config, "shell_sessions", None), "enabled", False):
        wanted.extend(names.SHELL_TOOLS)
    registered = set(inputs.registered)
    visible = tuple(
        n for n in wanted if n in registered and (inputs.allowlist is None or n in inputs.allowlist)
    )
    inactive = {n: msg for n, msg in INACTIVE_MESSAGES.items() if n not in visible}
    return Projection(visible=visible, nested_only=(), inactive=inactive)
