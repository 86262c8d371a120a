"""Projection: from config + host state to the active tool names of one session.

`plan_projection` is pure: it reads the visible tool registrations (with owners), the
session's current active list, the Tool Discovery loads and the natives the last
committed projection hid, and returns a `ProjectionPlan` — the ordered active list,
hidden natives, nested-only names, deferred-hidden names, the execution routes and one
final `Decision` per capability (conflicts and the `deferred` overlay applied). It never
touches a foreign registration: a name another extension visibly won keeps whatever
activation state it had.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field, replace

from pct_runtime.config import ToolkitConfig
from pct_runtime.decide.decisions import (
    CONFLICT,
    Decision,
    WebSearchSettings,
    decide_apply_patch_legacy,
    decide_code_mode_legacy,
    decide_computer_use,
    decide_image_generation,
    decide_remote_compaction,
    decide_rules_row,
    decide_shell_sessions_legacy,
    decide_tool_discovery,
    decide_web_search,
    overlay_deferred,
)
from pct_runtime.decide.execution import (
    ExecutionAdmission,
    ExecutionRoutes,
    is_eager_replacement,
    is_nested_only,
    request_capabilities,
    resolve_routes,
)
from pct_runtime.decide.registry import CAPABILITIES as CAPABILITY_ROWS
from pct_runtime.decide.routes import RouteRegistry
from pct_runtime.host.models import Model
from pct_runtime.host.names import (
    APPLY_PATCH_TOOL,
    CODE_MODE_TOOLS,
    COMPUTER_USE_TOOLS,
    DEFERRABLE_TOOL_NAMES,
    EXECUTION_TOOL_NAMES,
    FIND_TOOLS_TOOL,
    IMAGE_GENERATION_TOOL,
    NATIVE_BASH,
    NATIVE_EDIT,
    NATIVE_WRITE,
    REPLACEABLE_NATIVES,
    SHELL_TOOLS,
    WEB_SEARCH_TOOL,
)
from pct_runtime.host.session import SessionKind
from pct_runtime.host.tools import RUNTIME_OWNER, ToolSnapshot

#: Capability keys of `ProjectionPlan.decisions`, in status order (from the registry).
CAPABILITIES: tuple[str, ...] = tuple(row.key for row in CAPABILITY_ROWS)

#: A foreign tool literally named `web_search` duplicates the search path.
FOREIGN_SEARCH_TOOL = "web_search"

_PATCH_NOTES = (
    "patch-unavailable",
    "code-unavailable-did-not-promote-patch",
    "patch-unavailable-kept-native-editing",
)
_CODE_NOTES = ("code-pair-unavailable", "code-shell-pair-unavailable")


@dataclass(frozen=True)
class ProjectionInputs:
    """Everything one planning pass reads. Plain data; build a fresh one per pass.

    `active` is the session's live active list; a fresh session starts with every
    visible name. `host_admitted` is set for a child session: the names its host
    actually admitted (its `--tools` allowlist); everything else is absent to it.
    `computer_use_runtime_reason` is the injected result of the ChatGPT.app chain probe
    (None = usable). `native_suppressed` are the natives the last committed projection hid.
    """

    config: ToolkitConfig
    model: Model | None
    registry: RouteRegistry
    tools: ToolSnapshot
    active: tuple[str, ...]
    session_kind: SessionKind = "mcp"
    ui_available: bool = False
    identity: str | None = RUNTIME_OWNER
    discovered: frozenset[str] = frozenset()
    native_suppressed: frozenset[str] = frozenset()
    platform: str = "linux"
    computer_use_runtime_reason: str | None = None
    shell_available: bool = True
    host_admitted: frozenset[str] | None = None


@dataclass(frozen=True)
class ProjectionPlan:
    """One planned projection. Committing it is `ProjectionSync`'s job."""

    active: tuple[str, ...]
    hidden_natives: tuple[str, ...]
    nested_only: tuple[str, ...]
    deferred_hidden: tuple[str, ...]
    managed_deferred: tuple[str, ...]
    loader_available: bool
    loaded: tuple[str, ...]
    admitted_names: tuple[str, ...]
    routes: ExecutionRoutes
    decisions: dict[str, Decision]
    #: Decisions before conflicts/overlays: what discovery eligibility reads.
    base_decisions: dict[str, Decision]
    tools: ToolSnapshot
    identity: str | None
    model: Model | None
    session_kind: SessionKind
    ui_available: bool
    rules_managed: bool
    search_path_conflict: bool
    notes: tuple[str, ...] = field(default=())
    #: The session's loads after this plan: emptied while discovery is disabled, so that
    #: re-enabling hides every deferred name again. Write it back into the session on commit.
    discovered: frozenset[str] = frozenset()

    @property
    def native_suppressed(self) -> frozenset[str]:
        return frozenset(self.hidden_natives)

    @property
    def approval_transport(self) -> str:
        return "dialog" if self.ui_available else "unavailable"


def resolve_deferred_set(deferred: Iterable[str]) -> tuple[str, ...]:
    """The managed set: known deferrable names only, canonical order, no duplicates."""
    selected = set(deferred)
    return tuple(name for name in DEFERRABLE_TOOL_NAMES if name in selected)


def is_hidden_by_discovery(
    name: str, loader_available: bool, deferred: Iterable[str], discovered: Iterable[str]
) -> bool:
    """Managed and not yet loaded this session, while the `find_tools` loader is available.

    Losing the loader counts as discovery off: nothing is hidden.
    """
    return loader_available and name in set(deferred) and name not in set(discovered)


class _ActiveList:
    """An ordered set: removals keep order, additions append (as `setActiveTools` sees it)."""

    def __init__(self, names: Iterable[str]) -> None:
        self.names: list[str] = []
        for name in names:
            self.add(name)

    def add(self, name: str) -> None:
        if name not in self.names:
            self.names.append(name)

    def delete(self, name: str) -> None:
        if name in self.names:
            self.names.remove(name)

    def set(self, name: str, on: bool) -> None:
        if on:
            self.add(name)
        else:
            self.delete(name)

    def __contains__(self, name: object) -> bool:
        return name in self.names


def plan_projection(inputs: ProjectionInputs) -> ProjectionPlan:
    config = inputs.config
    tools = inputs.tools
    if inputs.host_admitted is not None:
        admitted = inputs.host_admitted
        tools = ToolSnapshot(tuple(t for t in tools.tools if t.name in admitted))
    ident = inputs.identity
    model = inputs.model
    ws_cfg = config.web_search

    base_ws = decide_web_search(
        WebSearchSettings(ws_cfg.enabled, ws_cfg.backend, ws_cfg.sidecar_model),
        model,
        inputs.registry,
        inputs.session_kind,
    )
    base_rc = decide_remote_compaction(
        config.remote_compaction.enabled, model, inputs.registry, inputs.session_kind
    )
    base_img = decide_image_generation(config.image_generation.enabled, model, inputs.registry)
    base_cu = decide_computer_use(
        config.computer_use.enabled,
        inputs.platform,
        inputs.ui_available,
        model,
        inputs.computer_use_runtime_reason,
    )

    # Activation reading: foreign *or* absent blocks a name.
    ws_conflict = tools.unavailable(WEB_SEARCH_TOOL, ident)
    img_conflict = tools.unavailable(IMAGE_GENERATION_TOOL, ident)
    patch_conflict = tools.unavailable(APPLY_PATCH_TOOL, ident)
    cu_conflicts = {name: tools.unavailable(name, ident) for name in COMPUTER_USE_TOOLS}
    cu_conflict = any(cu_conflicts.values())
    shell_conflict = any(tools.unavailable(name, ident) for name in SHELL_TOOLS)
    code_conflict = any(tools.unavailable(name, ident) for name in CODE_MODE_TOOLS)
    find_conflict = tools.unavailable(FIND_TOOLS_TOOL, ident)
    # Dispatch reading for rules rows: only a visible foreign winner is a conflict.
    patch_foreign = tools.visibly_foreign(APPLY_PATCH_TOOL, ident)
    shell_foreign = any(tools.visibly_foreign(name, ident) for name in SHELL_TOOLS)
    code_foreign = any(tools.visibly_foreign(name, ident) for name in CODE_MODE_TOOLS)

    discovery = config.tool_discovery
    managed = resolve_deferred_set(discovery.deferred)
    loader = discovery.enabled and not find_conflict
    discovered = inputs.discovered if discovery.enabled else frozenset()

    def hidden(name: str) -> bool:
        return is_hidden_by_discovery(name, loader, managed, discovered)

    routes = resolve_routes(
        request_capabilities(config, model), ExecutionAdmission.from_tools(tools, ident)
    )

    def wants_visible(name: str, route_visible: bool) -> bool:
        if not route_visible or is_nested_only(name, routes):
            return False
        if is_eager_replacement(name, routes):
            return True
        return not hidden(name)

    desired = _ActiveList(inputs.active)
    if not ws_conflict:
        desired.set(
            WEB_SEARCH_TOOL, base_ws.effective_backend == "sidecar" and not hidden(WEB_SEARCH_TOOL)
        )
    if not img_conflict:
        desired.set(IMAGE_GENERATION_TOOL, base_img.active and not hidden(IMAGE_GENERATION_TOOL))
    if not patch_conflict:
        desired.set(APPLY_PATCH_TOOL, wants_visible(APPLY_PATCH_TOOL, routes.direct_patch))
    for name in COMPUTER_USE_TOOLS:
        if not cu_conflicts[name]:
            desired.set(name, not cu_conflict and base_cu.active and not hidden(name))
    for names, conflict, route_on in (
        (SHELL_TOOLS, shell_conflict, routes.direct_shell),
        (CODE_MODE_TOOLS, code_conflict, routes.code),
    ):
        for name in names:
            if not conflict:
                desired.set(name, wants_visible(name, route_on))
            elif not tools.unavailable(name, ident):
                desired.delete(name)  # a conflicting sibling disables the whole pair
    if not find_conflict:
        desired.set(FIND_TOOLS_TOOL, discovery.enabled)

    # Native substitution is keyed by built-in identity: only a visible built-in winner
    # is ours to hide, only what we hid is restored, and a built-in that was already
    # inactive (user-disabled) is never revived.
    suppressed = set(inputs.native_suppressed)
    for name, hide in (
        (NATIVE_BASH, routes.hide_bash),
        (NATIVE_EDIT, routes.hide_edit_write),
        (NATIVE_WRITE, routes.hide_edit_write),
    ):
        builtin = tools.is_builtin_winner(name)
        if hide:
            if builtin:
                if name in desired:
                    suppressed.add(name)
                desired.delete(name)
            else:
                suppressed.discard(name)
        elif name in suppressed:
            suppressed.discard(name)
            if builtin:
                desired.add(name)

    active = tuple(desired.names)
    deferred_hidden = tuple(
        name
        for name in managed
        if hidden(name)
        and not is_eager_replacement(name, routes)
        and not is_nested_only(name, routes)
    )
    managed_set = frozenset(managed)
    hidden_set = frozenset(deferred_hidden)
    loaded = tuple(name for name in managed if name in discovered and name in active)
    search_path_conflict = ws_cfg.enabled and FOREIGN_SEARCH_TOOL in active

    decisions = {
        "web_search": _web_search_row(
            base_ws, ws_conflict, search_path_conflict, managed_set, hidden_set
        ),
        "remote_compaction": base_rc,
        "image_generation": overlay_deferred(
            base_img.unavailable(CONFLICT) if img_conflict and base_img.active else base_img,
            (IMAGE_GENERATION_TOOL,),
            managed_set,
            hidden_set,
        ),
        "apply_patch": overlay_deferred(
            _patch_row(config, routes, patch_conflict, patch_foreign),
            (APPLY_PATCH_TOOL,),
            managed_set,
            hidden_set,
        ),
        "computer_use": overlay_deferred(
            base_cu.unavailable(CONFLICT) if cu_conflict and base_cu.active else base_cu,
            COMPUTER_USE_TOOLS,
            managed_set,
            hidden_set,
        ),
        "shell_sessions": overlay_deferred(
            _shell_row(config, routes, shell_conflict, shell_foreign, inputs.shell_available),
            SHELL_TOOLS,
            managed_set,
            hidden_set,
        ),
        "code_mode": overlay_deferred(
            _code_row(config, routes, code_conflict, code_foreign),
            CODE_MODE_TOOLS,
            managed_set,
            hidden_set,
        ),
        "tool_discovery": decide_tool_discovery(
            discovery.enabled, find_conflict, len(managed), len(loaded)
        ),
    }
    admitted_names = tuple(name for name in EXECUTION_TOOL_NAMES if tools.owned(name, ident))
    return ProjectionPlan(
        active=active,
        hidden_natives=tuple(name for name in REPLACEABLE_NATIVES if name in suppressed),
        nested_only=tuple(name for name in admitted_names if is_nested_only(name, routes)),
        deferred_hidden=deferred_hidden,
        managed_deferred=managed,
        loader_available=loader,
        loaded=loaded,
        admitted_names=admitted_names,
        routes=routes,
        decisions=decisions,
        base_decisions={
            "web_search": base_ws,
            "remote_compaction": base_rc,
            "image_generation": base_img,
            "computer_use": base_cu,
        },
        tools=tools,
        identity=ident,
        model=model,
        session_kind=inputs.session_kind,
        ui_available=inputs.ui_available,
        rules_managed=config.execution is not None,
        search_path_conflict=search_path_conflict,
        notes=routes.notes,
        discovered=frozenset(discovered),
    )


def _web_search_row(
    base: Decision,
    conflict: bool,
    search_path_conflict: bool,
    managed: frozenset[str],
    hidden: frozenset[str],
) -> Decision:
    """A sidecar whose tool name is not ours is unavailable; a native decision is not."""
    row = base
    if conflict and base.effective_backend == "sidecar":
        row = replace(
            base, effective="unavailable", effective_backend="unavailable", reason=CONFLICT
        )
    if row.effective_backend == "sidecar":
        row = overlay_deferred(row, (WEB_SEARCH_TOOL,), managed, hidden)
    if row.effective in ("active",) and search_path_conflict:
        row = replace(row, reason=CONFLICT)  # duplicate search path: a warning, still active
    return row


def _first(notes: tuple[str, ...], wanted: tuple[str, ...]) -> str:
    return next((note for note in notes if note in wanted), "")


def _patch_row(
    config: ToolkitConfig, routes: ExecutionRoutes, conflict: bool, foreign: bool
) -> Decision:
    if config.execution is None:
        return decide_apply_patch_legacy(config.apply_patch.enabled, conflict)
    return decide_rules_row(
        routes.requested.patch,
        routes.direct_patch or routes.nested_patch,
        foreign,
        _first(routes.notes, _PATCH_NOTES),
    )


def _shell_row(
    config: ToolkitConfig,
    routes: ExecutionRoutes,
    conflict: bool,
    foreign: bool,
    shell_available: bool,
) -> Decision:
    if config.execution is None:
        return decide_shell_sessions_legacy(
            config.shell_sessions.enabled, shell_available, conflict
        )
    if routes.direct_shell:
        note = "shell-unavailable"
    elif "shell-pair-unavailable" in routes.notes:
        note = "shell-pair-unavailable"
    else:
        note = ""
    return decide_rules_row(
        routes.requested.shell, routes.direct_shell and shell_available, foreign, note
    )


def _code_row(
    config: ToolkitConfig, routes: ExecutionRoutes, conflict: bool, foreign: bool
) -> Decision:
    if config.execution is None:
        return decide_code_mode_legacy(config.code_mode.enabled, conflict)
    return decide_rules_row(
        routes.requested.code, routes.code, foreign, _first(routes.notes, _CODE_NOTES)
    )
