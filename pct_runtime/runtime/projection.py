"""The projection seam between the decision layer and the runtime.

The runtime asks one question of the decision layer: for this session (config, model,
kind, UI, allowlist), which tool names are visible, which are reachable only from inside
Code Mode cells, and what exact error does a call to a known but inactive name get? The
answer is a `Projection`; everything the MCP server and the console show comes from it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal

from pct_runtime.capabilities.table import BY_TOOL, CAPABILITIES
from pct_runtime.decide.discovery import load_names
from pct_runtime.decide.projection import ProjectionPlan

#: Exact model-facing refusals for owned names, by name: a call to an inactive tool gets its
#: feature's fixed sentence (`Shell Sessions are not enabled.`), never a generic error.
INACTIVE_MESSAGES: Mapping[str, str] = {
    name: row.refusal for row in CAPABILITIES for name in row.tools
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
    plan: ProjectionPlan | None = None

    def admits(self, name: str, path: Literal["direct", "nested"]) -> bool:
        if name in self.visible:
            return True
        return path == "nested" and name in self.nested_only

    def refusal(self, name: str) -> str | None:
        """The exact text for a known name a direct call may not reach; None when unknown.

        A nested-only name (the execution rules route it through Code Mode) is told where
        it does work, so the model switches to `exec` instead of giving up.
        """
        if name in self.nested_only:
            return nested_only_message(name)
        return self.inactive.get(name)

    def same_surface(self, other: Projection) -> bool:
        """True when an agent would see no difference (drives `list_changed`)."""
        return self.visible == other.visible and self.nested_only == other.nested_only


def nested_only_message(name: str) -> str:
    """The refusal of a direct call to a name the session admits only inside Code Mode."""
    return (
        f"{name} is available only inside Code Mode in this session: "
        f"call await tools.{name}(...) from exec."
    )


def refusal_for(name: str, plan: ProjectionPlan) -> str:
    """The exact text a call to the known but inactive `name` gets.

    A name Tool Discovery hides gets the "load it" hint only when `find_tools` would load
    it right now (the same check the loader runs); a hidden name whose feature is off,
    unavailable or blocked gets the feature's own refusal instead, as if it were not
    deferred — loading it would be rejected anyway. Web Search and Image Generation say
    why when their decision is `unavailable`.
    """
    if name in plan.deferred_hidden and not load_names([name], plan).rejected:
        return f'{name} is deferred by Tool Discovery; load it with find_tools (load: ["{name}"]).'
    row = BY_TOOL.get(name)
    if row is not None and row.unavailable_prefix is not None:
        decision = plan.decisions.get(row.key)
        if decision is not None and decision.effective == "unavailable" and decision.reason:
            return f"{row.unavailable_prefix}{decision.reason}."
    return INACTIVE_MESSAGES.get(name, f"{name} is not available in this session.")
