"""Execution routes: which of Patch / direct Shell / Code are requested and admitted.

With an `execution` section the first matching model rule is the only authority, and an
effective route hides the natives it replaces (Shell or Code hide `bash`, Patch hides
`edit`/`write`; `read` never). Without it the legacy `enabled` switches are additive and
hide nothing. Routes are resolved against *admission* (does the runtime own the visible
winners?), never by clearing bits: a failed Code route never becomes direct Shell or Patch.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Literal

from pct_runtime.config import ToolkitConfig
from pct_runtime.config.rules import first_matching_rule
from pct_runtime.datarecord import datarecord, field
from pct_runtime.decide.decisions import (
    Decision,
    decide_apply_patch_legacy,
    decide_code_mode_legacy,
    decide_rules_row,
    decide_shell_sessions_legacy,
)
from pct_runtime.host.pi.model_registry import Model
from pct_runtime.host.pi.names import APPLY_PATCH_TOOL, CODE_MODE_TOOLS, SHELL_TOOLS
from pct_runtime.host.pi.tool_registry import RUNTIME_OWNER, ToolSnapshot

ExecutionSource = Literal["rules", "legacy", "unmatched"]

#: Admission notes in the order routes add them (shell, code, patch).
EXECUTION_NOTES: tuple[str, ...] = (
    "shell-pair-unavailable",
    "code-pair-unavailable",
    "code-shell-pair-unavailable",
    "patch-unavailable",
    "code-unavailable-did-not-promote-patch",
    "patch-unavailable-kept-native-editing",
)


@datarecord
class RequestedCapabilities:
    patch: bool = False
    shell: bool = False
    code: bool = False
    source: ExecutionSource = "unmatched"
    rule_id: str | None = None


@datarecord
class ExecutionAdmission:
    """Which owned execution names the host admitted (visible winner is the runtime's)."""

    patch_owned: bool
    shell_pair: bool
    code_pair: bool

    @classmethod
    def from_tools(
        cls, tools: ToolSnapshot, identity: str | None = RUNTIME_OWNER
    ) -> ExecutionAdmission:
        return cls(
            patch_owned=tools.owned(APPLY_PATCH_TOOL, identity),
            shell_pair=all(tools.owned(name, identity) for name in SHELL_TOOLS),
            code_pair=all(tools.owned(name, identity) for name in CODE_MODE_TOOLS),
        )

    def intersect(self, names: Iterable[str]) -> ExecutionAdmission:
        """A child session: keep only what its host actually admitted (`names`)."""
        admitted = set(names)
        return ExecutionAdmission(
            patch_owned=self.patch_owned and APPLY_PATCH_TOOL in admitted,
            shell_pair=self.shell_pair and all(n in admitted for n in SHELL_TOOLS),
            code_pair=self.code_pair and all(n in admitted for n in CODE_MODE_TOOLS),
        )


@datarecord
class ExecutionRoutes:
    requested: RequestedCapabilities = field(default_factory=RequestedCapabilities)
    direct_patch: bool = False
    nested_patch: bool = False
    direct_shell: bool = False
    code: bool = False
    needs_shell_backend: bool = False
    hide_bash: bool = False
    hide_edit_write: bool = False
    notes: tuple[str, ...] = ()


def request_capabilities(config: ToolkitConfig, model: Model | None) -> RequestedCapabilities:
    """Rules (first match wins; no model or no match → nothing requested) or, without an
    `execution` section, the legacy switches."""
    if config.execution is not None:
        if model is None:
            return RequestedCapabilities()
        rule = first_matching_rule(config.execution.rules, model.id, model.provider)
        if rule is None:
            return RequestedCapabilities()
        return RequestedCapabilities(rule.patch, rule.shell, rule.code, "rules", rule.id)
    return RequestedCapabilities(
        config.apply_patch.enabled,
        config.shell_sessions.enabled,
        config.code_mode.enabled,
        "legacy",
    )


def resolve_legacy_routes(
    requested: RequestedCapabilities, admission: ExecutionAdmission
) -> ExecutionRoutes:
    """Pre-rules switches: additive tools, no native substitution, no notes."""
    direct_shell = requested.shell and admission.shell_pair
    return ExecutionRoutes(
        requested=requested,
        direct_patch=requested.patch and admission.patch_owned,
        nested_patch=requested.patch and requested.code and admission.patch_owned,
        direct_shell=direct_shell,
        code=requested.code and admission.code_pair,
        needs_shell_backend=direct_shell,
    )


def resolve_execution_routes(
    requested: RequestedCapabilities, admission: ExecutionAdmission
) -> ExecutionRoutes:
    """Rules routes with admission notes, in the order shell, code, patch."""
    notes: list[str] = []
    direct_shell = requested.shell and admission.shell_pair
    if requested.shell and not admission.shell_pair:
        notes.append("shell-pair-unavailable")
    code = False
    if requested.code:
        if not admission.code_pair:
            notes.append("code-pair-unavailable")
        elif not admission.shell_pair:
            notes.append("code-shell-pair-unavailable")
        else:
            code = True
    direct_patch = nested_patch = False
    if requested.patch and requested.code:
        if code:
            if admission.patch_owned:
                nested_patch = True
            else:
                notes.append("patch-unavailable-kept-native-editing")
        else:
            notes.append("code-unavailable-did-not-promote-patch")
    elif requested.patch:
        if admission.patch_owned:
            direct_patch = True
        else:
            notes.append("patch-unavailable")
    return ExecutionRoutes(
        requested=requested,
        direct_patch=direct_patch,
        nested_patch=nested_patch,
        direct_shell=direct_shell,
        code=code,
        needs_shell_backend=direct_shell or code,
        hide_bash=direct_shell or code,
        hide_edit_write=direct_patch or nested_patch,
        notes=tuple(notes),
    )


def resolve_routes(
    requested: RequestedCapabilities, admission: ExecutionAdmission
) -> ExecutionRoutes:
    if requested.source == "legacy":
        return resolve_legacy_routes(requested, admission)
    return resolve_execution_routes(requested, admission)


def is_eager_replacement(name: str, routes: ExecutionRoutes) -> bool:
    """A replacement route's names stay visible even when listed as deferred."""
    if name == APPLY_PATCH_TOOL:
        return routes.hide_edit_write and routes.direct_patch
    if name in SHELL_TOOLS:
        return routes.hide_bash and routes.direct_shell
    if name in CODE_MODE_TOOLS:
        return routes.hide_bash and routes.code
    return False


def is_nested_only(name: str, routes: ExecutionRoutes) -> bool:
    """Reachable only inside Code Mode cells: hidden from the active list."""
    if name == APPLY_PATCH_TOOL:
        return routes.nested_patch and not routes.direct_patch
    if name in SHELL_TOOLS:
        return routes.needs_shell_backend and not routes.direct_shell
    return False


_PATCH_NOTES = (
    "patch-unavailable",
    "code-unavailable-did-not-promote-patch",
    "patch-unavailable-kept-native-editing",
)
_CODE_NOTES = ("code-pair-unavailable", "code-shell-pair-unavailable")


def _first(notes: tuple[str, ...], wanted: tuple[str, ...]) -> str:
    return next((note for note in notes if note in wanted), "")


def patch_decision(
    config: ToolkitConfig, routes: ExecutionRoutes, conflict: bool, foreign: bool
) -> Decision:
    """Apply Patch's row: the legacy switch, or the rules route with its admission note."""
    if config.execution is None:
        return decide_apply_patch_legacy(config.apply_patch.enabled, conflict)
    return decide_rules_row(
        routes.requested.patch,
        routes.direct_patch or routes.nested_patch,
        foreign,
        _first(routes.notes, _PATCH_NOTES),
    )


def shell_decision(
    config: ToolkitConfig,
    routes: ExecutionRoutes,
    conflict: bool,
    foreign: bool,
    shell_available: bool,
) -> Decision:
    """Shell Sessions' row: the legacy switch, or the direct Shell route."""
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


def code_decision(
    config: ToolkitConfig, routes: ExecutionRoutes, conflict: bool, foreign: bool
) -> Decision:
    """Code Mode's row: the legacy switch, or the Code route with its admission note."""
    if config.execution is None:
        return decide_code_mode_legacy(config.code_mode.enabled, conflict)
    return decide_rules_row(
        routes.requested.code, routes.code, foreign, _first(routes.notes, _CODE_NOTES)
    )


def format_requested(requested: RequestedCapabilities) -> str:
    flags = [
        f for f, on in (("P", requested.patch), ("S", requested.shell), ("C", requested.code)) if on
    ]
    return "+".join(flags) if flags else "none"


def format_effective(routes: ExecutionRoutes) -> str:
    parts = [
        name
        for name, on in (
            ("directPatch", routes.direct_patch),
            ("nestedPatch", routes.nested_patch),
            ("directShell", routes.direct_shell),
            ("code", routes.code),
        )
        if on
    ]
    return "+".join(parts) if parts else "native"


def format_execution_block(routes: ExecutionRoutes) -> str:
    """The `Execution rules:` block of `/pct status` (also the rule editor's preview)."""
    return "\n".join(
        (
            "Execution rules:",
            f"  schema: {routes.requested.source}",
            f"  rule: {routes.requested.rule_id or '—'}",
            f"  requested: {format_requested(routes.requested)}",
            f"  effective: {format_effective(routes)}",
            f"  hide bash: {'yes' if routes.hide_bash else 'no'}",
            f"  hide edit/write: {'yes' if routes.hide_edit_write else 'no'}",
            f"  notes: {','.join(routes.notes)}",
        )
    )
