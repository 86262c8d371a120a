"""The per-session services a capability's tools are built from, and the binding record.

A `CapabilityBinding` names the tools a capability provides and builds them for one
session from that session's `SessionServices` (cwd, UI, shared managers, the nested-call
dispatcher). Managers shared between capabilities (the shell manager that Code Mode also
drives, the output owner) are created once per session through `SessionServices.shared`,
and everything registered with `on_close` is torn down when the session ends.

The bottom of `pct_runtime.runtime`: it imports nothing else from the package. The
managers built on it live in `managers`, the bindings of every capability in `bindings`.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeVar

from pct_runtime.capabilities.base import Tool, ToolResult
from pct_runtime.config import default_config
from pct_runtime.config.commands import CommandsFields
from pct_runtime.config.schema import ToolkitConfig
from pct_runtime.debug import DISABLED, DebugSink
from pct_runtime.decide.projection import ProjectionPlan
from pct_runtime.host.models import Model, ModelRegistry
from pct_runtime.host.sandbox import SandboxSettings
from pct_runtime.host.ui import UIPort
from pct_runtime.invocation import InvocationHooks
from pct_runtime.jsontypes import JSONObject

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
    #: The session's committed plan (None before the first sync).
    plan: Callable[[], ProjectionPlan | None] = lambda: None
    #: Plan the session's projection now, uncommitted (`find_tools` rechecks per call).
    plan_now: Callable[[], ProjectionPlan | None] = lambda: None
    #: The description of one of the session's own tools; None when it has no such tool.
    describe: Callable[[str], str | None] = lambda name: None
    #: Deferred names `find_tools` loaded in this session (mutable; never persisted).
    discovered: set[str] = field(default_factory=set)
    #: Re-plan and commit the session's projection (after a load); True if it changed.
    resync: Callable[[], Awaitable[bool]] | None = None
    #: The embedder's invocation hooks.
    hooks: InvocationHooks | None = None
    #: `admit(name, path)` raises the capability's `ToolError` unless admitted right now.
    admit: Callable[[str, str], None] = lambda name, path: None
    #: The session's names admitted right now (visible plus nested-only).
    admitted: Callable[[], tuple[str, ...]] = lambda: ()
    #: The runtime's current config.
    config: Callable[[], ToolkitConfig] = default_config
    #: The session's current model; a model switch shows here.
    model: Callable[[], Model | None] = lambda: None
    #: The runtime's model registry (Pi's models, credentials and settings).
    models: Callable[[], ModelRegistry] = ModelRegistry.builtin
    #: The runtime's `debug.DebugSink` (enabled live by the config's `debug`).
    debug: DebugSink = DISABLED
    #: Called with the key whenever `shared` builds an instance (the first time, or again
    #: after `drop`), so viewers can subscribe to a manager the session just (re)bound.
    on_built: Callable[[str], None] = lambda key: None
    #: The runtime's current `pct.commands` (the command policy).
    commands: Callable[[], CommandsFields] = CommandsFields
    #: The runtime's `--sandbox` settings (None: no sandbox).
    sandbox_settings: SandboxSettings | None = None
    _shared: JSONObject = field(default_factory=dict)
    _closers: list[Callable[[], Awaitable[None]]] = field(default_factory=list)
    _slots: set[str] = field(default_factory=set)

    def shared(
        self,
        key: str,
        factory: Callable[[], T],
        close: Callable[[T], Awaitable[None]] | None = None,
    ) -> T:
        """One instance per session for `key` (e.g. the shell manager), built on first use.

        `close(instance)` is registered once, on the key's first build, and closes whichever
        instance the key holds when the session ends: keys keep their first-build order
        (closed newest first) even when `drop` made a later call bind a fresh instance.
        """
        if key not in self._shared:
            self._shared[key] = factory()
            self.on_built(key)
            if close is not None and key not in self._slots:
                self._slots.add(key)

                async def close_current() -> None:
                    current = self._shared.get(key)
                    if current is not None:
                        await close(current)

                self.on_close(close_current)
        value: T = self._shared[key]
        return value

    def drop(self, key: str) -> object | None:
        """Forget the instance of `key` (after its cleanup succeeded); the next `shared`
        call for it builds a fresh one. Returns the dropped instance, if any."""
        dropped: object | None = self._shared.pop(key, None)
        return dropped

    def peek(self, key: str) -> object | None:
        """The shared instance for `key` if one was built (e.g. `shell`, `code`), else None.

        For viewers (the console's sessions screen); never builds anything.
        """
        return self._shared.get(key)

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
    """A capability's names and the builder of its tools for one session.

    Whether a tool runs the invocation hooks itself is the tool's own
    `runs_invocation_hooks` (see `pct_runtime.invocation.runs_own_hooks`), not the binding's.
    """

    capability: str
    names: tuple[str, ...]
    build: ToolBuilder
