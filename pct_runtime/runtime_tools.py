"""How the runtime builds each session's tool instances from the capability packages.

A `CapabilityBinding` names the tools a capability provides and builds them for one
session from that session's `SessionServices` (cwd, UI, shared managers, the nested-call
dispatcher). Managers shared between capabilities (the shell manager that Code Mode also
drives, the output owner) are created once per session through `SessionServices.shared`,
and everything registered with `on_close` is torn down when the session ends.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from pct_runtime.capabilities.base import Tool, ToolResult
from pct_runtime.host.ui import UIPort

_log = logging.getLogger(__name__)
T = TypeVar("T")

NestedDispatch = Callable[..., Awaitable[ToolResult]]
"""`await dispatch(name, args, *, cell_id, progress=None) -> ToolResult` (raises ToolError)."""


@dataclass
class SessionServices:
    """Per-session context handed to capability builders."""

    session_id: str
    cwd: Path
    ui: UIPort
    nested: NestedDispatch
    agent_dir: Path
    #: The session's committed `ProjectionPlan` (None before the first sync).
    plan: Callable[[], Any] = lambda: None
    #: Deferred names `find_tools` loaded in this session (mutable; never persisted).
    discovered: set[str] = field(default_factory=set)
    #: Re-plan and commit the session's projection (after a load); True if it changed.
    resync: Callable[[], Awaitable[bool]] | None = None
    _shared: dict[str, Any] = field(default_factory=dict)
    _closers: list[Callable[[], Awaitable[None]]] = field(default_factory=list)

    def shared(self, key: str, factory: Callable[[], T]) -> T:
        """One instance per session for `key` (e.g. the shell manager), built on first use."""
        if key not in self._shared:
            self._shared[key] = factory()
        value: T = self._shared[key]
        return value

    def on_close(self, closer: Callable[[], Awaitable[None]]) -> None:
        """Register async cleanup that runs when the session ends (LIFO)."""
        self._closers.append(closer)

    async def aclose(self) -> list[BaseException]:
        """Run every closer, newest first; collect failures instead of stopping early."""
        errors: list[BaseException] = []
        while self._closers:
            closer = self._closers.pop()
            try:
                await closer()
            except Exception as exc:
                _log.exception("session cleanup step failed")
                errors.append(exc)
        self._shared.clear()
        return errors


ToolBuilder = Callable[[SessionServices], Sequence[Tool]]


@dataclass(frozen=True)
class CapabilityBinding:
    """A capability's names and the builder of its tools for one session."""

    capability: str
    names: tuple[str, ...]
    build: ToolBuilder


def default_bindings() -> list[CapabilityBinding]:
    """Bindings for every capability package present in this installation.

    Capabilities import lazily so that `pct` stays fast and a capability that fails to
    import disables only itself (logged), never the runtime.
    """
    bindings: list[CapabilityBinding] = []
    for factory in _BINDING_FACTORIES:
        try:
            binding = factory()
        except ImportError:
            _log.debug("capability not installed: %s", factory.__name__, exc_info=True)
            continue
        if binding is not None:
            bindings.append(binding)
    return bindings


_BINDING_FACTORIES: list[Callable[[], CapabilityBinding | None]] = []


def tools_by_name(tools: Sequence[Tool]) -> Mapping[str, Tool]:
    return {tool.spec.name: tool for tool in tools}
