"""What a capability's planner reads in one planning pass, and the Protocol it implements.

`plan_projection` builds one `PlanContext` and hands it to every capability row's planner
(`decide/rows.py`; each capability package declares its row), so the projection and
discovery iterate rows instead of naming capabilities. The context is plain data plus the
projection's shared readings (ownership, the discovery overlay, the execution routes);
nothing here names a capability.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Protocol

from pct_runtime.config import ToolkitConfig
from pct_runtime.datarecord import datarecord, field
from pct_runtime.decide.decisions import CONFLICT, Decision, overlay_deferred
from pct_runtime.decide.execution import ExecutionRoutes, is_eager_replacement, is_nested_only
from pct_runtime.decide.routes import RouteRegistry
from pct_runtime.host.pi.model_registry import Model
from pct_runtime.host.pi.session import SessionKind
from pct_runtime.host.pi.tool_registry import RUNTIME_OWNER, ToolSnapshot

# Discovery's stable reasons a planner may give (the spec's `find_tools` reasons).
DISABLED = "disabled"
NESTED_ONLY = "nested-only"
NATIVE_BACKEND = "native-backend"


@datarecord
class ProjectionInputs:
    """Everything one planning pass reads. Plain data; build a fresh one per pass.

    `active` is the session's live active list; a fresh session starts with every
    visible name. `host_admitted` is set for a child session: the names its host
    actually admitted (its `--tools` allowlist); everything else is absent to it.
    `host_reasons` are the capability descriptors' host probes by capability key
    (`runtime.inputs`; None = usable; tests inject them directly). `native_suppressed`
    are the natives the last committed projection hid.
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
    host_reasons: Mapping[str, str | None] = field(default_factory=dict)
    shell_available: bool = True
    host_admitted: frozenset[str] | None = None


class ActiveList:
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


@datarecord
class Eligibility:
    ok: bool
    reason: str = ""


ELIGIBLE = Eligibility(True)


def ineligible(reason: str) -> Eligibility:
    return Eligibility(False, reason)


@datarecord
class PlanContext:
    """One pass's shared readings. `tools` is already narrowed to a child's admitted names.

    `active`, `deferred_hidden` and `loaded` are empty until the active list is settled;
    `final` decisions read the context the projection rebuilt with them.
    """

    inputs: ProjectionInputs
    tools: ToolSnapshot
    routes: ExecutionRoutes
    managed: tuple[str, ...]
    loader: bool
    discovered: frozenset[str]
    active: tuple[str, ...] = ()
    deferred_hidden: frozenset[str] = frozenset()
    loaded: tuple[str, ...] = ()

    @property
    def config(self) -> ToolkitConfig:
        return self.inputs.config

    @property
    def model(self) -> Model | None:
        return self.inputs.model

    @property
    def identity(self) -> str | None:
        return self.inputs.identity

    def unavailable(self, name: str) -> bool:
        """Activation reading: a foreign *or* absent winner blocks a name."""
        return self.tools.unavailable(name, self.identity)

    def any_unavailable(self, names: Iterable[str]) -> bool:
        return any(self.unavailable(name) for name in names)

    def any_foreign(self, names: Iterable[str]) -> bool:
        """Dispatch reading for rules rows: only a visible foreign winner is a conflict."""
        return any(self.tools.visibly_foreign(name, self.identity) for name in names)

    def hidden(self, name: str) -> bool:
        """Managed and not loaded this session, while the `find_tools` loader is available."""
        return self.loader and name in self.managed and name not in self.discovered

    def wants_visible(self, name: str, route_visible: bool) -> bool:
        """An execution name: its route on, not nested-only, eager or not hidden."""
        if not route_visible or is_nested_only(name, self.routes):
            return False
        if is_eager_replacement(name, self.routes):
            return True
        return not self.hidden(name)

    def activate(
        self, desired: ActiveList, names: tuple[str, ...], want: Callable[[str], bool]
    ) -> None:
        """Set each of our names; a conflicting member disables the whole group.

        A name another registration blocks keeps whatever state it had."""
        conflict = self.any_unavailable(names)
        for name in names:
            if not self.unavailable(name):
                desired.set(name, not conflict and want(name))

    def overlay(self, decision: Decision, names: tuple[str, ...]) -> Decision:
        """The `deferred` overlay over this pass's managed and hidden names."""
        return overlay_deferred(decision, names, frozenset(self.managed), self.deferred_hidden)

    def conflicted(self, base: Decision, names: tuple[str, ...]) -> Decision:
        """An active decision whose names another registration blocks is a conflict."""
        if base.active and self.any_unavailable(names):
            return base.unavailable(CONFLICT)
        return base


class Planner(Protocol):
    """A capability's part of a planning pass (one per registry row)."""

    def base(self, ctx: PlanContext) -> Decision | None:
        """The decision on its own, before conflicts; None when only `final` decides."""

    def activate(self, ctx: PlanContext, base: Decision | None, desired: ActiveList) -> None:
        """Set or clear this capability's names in the desired active list."""

    def final(self, ctx: PlanContext, base: Decision | None) -> Decision:
        """The status row: conflicts and the deferred overlay applied."""

    def eligibility(self, name: str, base: Decision | None, routes: ExecutionRoutes) -> Eligibility:
        """May `find_tools` load this owned name (ownership already checked)?"""
