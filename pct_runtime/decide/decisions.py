"""Per-capability decisions: configured, effective and the reason, in the spec's precedence.

Each `decide_*` is a pure function of config + host facts. Conflicts with other
registrations and the Tool Discovery `deferred` overlay are applied later by the
projection (`projection.py`), which owns name ownership; these functions give the
decision a capability would have on its own.
"""

from __future__ import annotations

from typing import Literal

from pct_runtime.datarecord import datarecord, replace
from pct_runtime.decide.routes import (
    ModelReference,
    RouteInspection,
    RouteRegistry,
    inspect_current_native_route,
    inspect_image_executor,
    inspect_remote_compaction_route,
    inspect_sidecar_executor,
)
from pct_runtime.host.pi.model_registry import Model
from pct_runtime.host.pi.session import SessionKind

Effective = Literal["active", "deferred", "unavailable", "off"]
NO_PAYLOAD_HOOK = "no-payload-hook"
CONFLICT = "conflicting-tool-name"
DASH = "—"


@datarecord
class Decision:
    """One capability's status row.

    Extra fields are set only for the capabilities that show them: Web Search
    (`requested_backend`, `effective_backend`, `executor`, `executor_effort`), Image
    Generation (`backend`), Computer Use (`transport`), Tool Discovery
    (`managed`, `loaded`).
    """

    configured: bool
    effective: Effective
    reason: str = ""
    requested_backend: str | None = None
    effective_backend: str | None = None
    executor: str | None = None
    executor_effort: str | None = None
    backend: str | None = None
    transport: str | None = None
    managed: int | None = None
    loaded: int | None = None

    @property
    def active(self) -> bool:
        return self.effective == "active"

    def unavailable(self, reason: str) -> Decision:
        return replace(self, effective="unavailable", reason=reason)


def _off(backend: str | None = None, transport: str | None = None) -> Decision:
    return Decision(False, "off", "", backend=backend, transport=transport)


# --- Web Search ---------------------------------------------------------------------------


@datarecord
class WebSearchSettings:
    """The fields of the Web Search section a decision reads."""

    enabled: bool
    backend: str
    sidecar_model: ModelReference | None


def _executor_label(ref: ModelReference | None) -> tuple[str, str]:
    if ref is None:
        return DASH, DASH
    return f"{ref.provider}/{ref.model}", ref.thinking_level


def native_search_route(
    model: Model | None, registry: RouteRegistry, kind: SessionKind
) -> RouteInspection:
    """Native injection needs a payload hook (embedded) and an official current route."""
    if kind != "embedded":
        return RouteInspection.fail(NO_PAYLOAD_HOOK)
    return inspect_current_native_route(model, registry)


def decide_web_search(
    settings: WebSearchSettings,
    model: Model | None,
    registry: RouteRegistry,
    kind: SessionKind,
) -> Decision:
    """Backend resolution: off → current-model-missing → native | sidecar | auto.

    `auto` takes native when the current route qualifies, else the sidecar when its
    executor is usable; the unavailable reason is the sidecar's (it always has one).
    """
    executor, effort = _executor_label(settings.sidecar_model)

    def row(configured: bool, effective: Effective, reason: str, backend: str) -> Decision:
        return Decision(
            configured,
            effective,
            reason,
            requested_backend=settings.backend,
            effective_backend=backend,
            executor=executor,
            executor_effort=effort,
        )

    if not settings.enabled:
        return row(False, "off", "", "off")

    def unavailable(reason: str) -> Decision:
        return row(True, "unavailable", reason, "unavailable")

    def chosen(backend: str) -> Decision:
        return row(True, "active", "", backend)

    if model is None:
        return unavailable("current-model-missing")
    if settings.backend == "native":
        native = native_search_route(model, registry, kind)
        return (
            chosen("native") if native.ok else unavailable(native.reason or "unsupported-provider")
        )
    sidecar = inspect_sidecar_executor(settings.sidecar_model, registry)
    if settings.backend == "sidecar":
        return (
            chosen("sidecar")
            if sidecar.ok
            else unavailable(sidecar.reason or "missing-sidecar-model")
        )
    native = native_search_route(model, registry, kind)
    if native.ok:
        return chosen("native")
    if sidecar.ok:
        return chosen("sidecar")
    return unavailable(sidecar.reason or native.reason or "missing-sidecar-model")


# --- Remote Compaction / Image Generation -----------------------------------------------------


def decide_remote_compaction(
    enabled: bool, model: Model | None, registry: RouteRegistry, kind: SessionKind
) -> Decision:
    """off → current-model-missing → no-payload-hook (mcp) → Codex OAuth route reasons."""
    if not enabled:
        return _off()
    if model is None:
        return Decision(True, "unavailable", "current-model-missing")
    if kind != "embedded":
        return Decision(True, "unavailable", NO_PAYLOAD_HOOK)
    route = inspect_remote_compaction_route(model, registry)
    if route.ok:
        return Decision(True, "active")
    return Decision(True, "unavailable", route.reason or "unsupported-provider")


def decide_image_generation(
    enabled: bool, model: Model | None, registry: RouteRegistry
) -> Decision:
    """off → current-model-missing → the image executor (current route → Codex → API key)."""
    if not enabled:
        return _off(backend=DASH)
    if model is None:
        return Decision(True, "unavailable", "current-model-missing", backend=DASH)
    executor = inspect_image_executor(model, registry)
    if executor.ok and executor.kind is not None:
        return Decision(True, "active", backend=executor.kind)
    return Decision(True, "unavailable", executor.reason or "missing-openai-auth", backend=DASH)


# --- Computer Use ----------------------------------------------------------------------------

#: Reasons an injected runtime probe may report, in the order the chain checks them.
COMPUTER_USE_RUNTIME_REASONS: tuple[str, ...] = (
    "missing-chatgpt-desktop-component",
    "missing-computer-use-helper",
    "node-repl-unavailable",
    "incompatible-sky-target",
)


def decide_computer_use(
    enabled: bool,
    platform: str,
    ui_available: bool,
    model: Model | None,
    runtime_reason: str | None,
) -> Decision:
    """off → unsupported-platform → no-interactive-ui → current-model-missing →
    model-has-no-image-input → the runtime probe's reason (components, helper, node_repl, sky).
    """
    if not enabled:
        return _off(transport=DASH)

    def unavailable(reason: str) -> Decision:
        return Decision(True, "unavailable", reason, transport=DASH)

    if platform != "darwin":
        return unavailable("unsupported-platform")
    if not ui_available:
        return unavailable("no-interactive-ui")
    if model is None:
        return unavailable("current-model-missing")
    if not model.has_image_input:
        return unavailable("model-has-no-image-input")
    if runtime_reason is not None:
        return unavailable(runtime_reason)
    return Decision(True, "active", transport="node-repl")


# --- legacy switch rows and rules rows --------------------------------------------------------


def decide_apply_patch_legacy(enabled: bool, conflict: bool) -> Decision:
    """Legacy switch: foreign *or absent* winner is `conflicting-tool-name`."""
    if not enabled:
        return _off()
    return Decision(True, "unavailable", CONFLICT) if conflict else Decision(True, "active")


def decide_shell_sessions_legacy(enabled: bool, shell_available: bool, conflict: bool) -> Decision:
    """off → conflicting-tool-name → shell-unavailable."""
    if not enabled:
        return _off()
    if conflict:
        return Decision(True, "unavailable", CONFLICT)
    if not shell_available:
        return Decision(True, "unavailable", "shell-unavailable")
    return Decision(True, "active")


def decide_code_mode_legacy(enabled: bool, conflict: bool) -> Decision:
    if not enabled:
        return _off()
    return Decision(True, "unavailable", CONFLICT) if conflict else Decision(True, "active")


def decide_rules_row(requested: bool, active: bool, foreign_conflict: bool, note: str) -> Decision:
    """A rules-managed row: not requested → off (no reason, even with a foreign winner);
    a *visible* foreign winner → conflicting-tool-name; active; else the admission note.
    """
    if not requested:
        return _off()
    if foreign_conflict:
        return Decision(True, "unavailable", CONFLICT)
    if active:
        return Decision(True, "active")
    return Decision(True, "unavailable", note)


def decide_tool_discovery(enabled: bool, conflict: bool, managed: int, loaded: int) -> Decision:
    """off → conflicting-tool-name (foreign or absent `find_tools`); counts are 0 unless
    the loader is available."""
    if not enabled:
        return Decision(False, "off", managed=0, loaded=0)
    if conflict:
        return Decision(True, "unavailable", CONFLICT, managed=0, loaded=0)
    return Decision(True, "active", managed=managed, loaded=loaded)


def overlay_deferred(
    decision: Decision, members: tuple[str, ...], deferred: frozenset[str], hidden: frozenset[str]
) -> Decision:
    """`deferred` replaces an otherwise-`active` row whose deferred members are all hidden.

    An empty deferred member set is never deferred. Backend/transport stay as when active.
    """
    if decision.effective != "active":
        return decision
    managed = [name for name in members if name in deferred]
    if managed and all(name in hidden for name in managed):
        return replace(decision, effective="deferred", reason="")
    return decision
