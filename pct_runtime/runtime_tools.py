"""How the runtime builds each session's tool instances from the capability packages.

A `CapabilityBinding` names the tools a capability provides and builds them for one
session from that session's `SessionServices` (cwd, UI, shared managers, the nested-call
dispatcher). Managers shared between capabilities (the shell manager that Code Mode also
drives, the output owner) are created once per session through `SessionServices.shared`,
and everything registered with `on_close` is torn down when the session ends.

A disable cleanup (`runtime_apply`) closes the shell or code manager mid-session. The
shell manager keeps its identity (it reopens when the route returns, so viewers stay
subscribed); a closed code manager is `drop`ped and the code tools reach theirs through a
getter, so the next call binds a fresh one. The output owner is never closed before the
session ends: recovery files live until then.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from pct_runtime.capabilities.base import Tool, ToolResult
from pct_runtime.debug import DISABLED, DebugSink
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
    #: Plan the session's projection now, uncommitted (`find_tools` rechecks per call).
    plan_now: Callable[[], Any] = lambda: None
    #: The description of one of the session's own tools; None when it has no such tool.
    describe: Callable[[str], str | None] = lambda name: None
    #: Deferred names `find_tools` loaded in this session (mutable; never persisted).
    discovered: set[str] = field(default_factory=set)
    #: Re-plan and commit the session's projection (after a load); True if it changed.
    resync: Callable[[], Awaitable[bool]] | None = None
    #: The embedder's invocation hooks (`InvocationHooks | None`).
    hooks: Any = None
    #: `admit(name, path)` raises the capability's `ToolError` unless admitted right now.
    admit: Callable[[str, str], None] = lambda name, path: None
    #: The session's names admitted right now (visible plus nested-only).
    admitted: Callable[[], tuple[str, ...]] = lambda: ()
    #: The runtime's current `ToolkitConfig`.
    config: Callable[[], Any] = lambda: None
    #: The session's current model (`host.models.Model | None`); a model switch shows here.
    model: Callable[[], Any] = lambda: None
    #: The runtime's model registry (`host.models.ModelRegistry`).
    models: Callable[[], Any] = lambda: None
    #: The runtime's `debug.DebugSink` (enabled live by the config's `debug`).
    debug: DebugSink = DISABLED
    #: Called with the key whenever `shared` builds an instance (the first time, or again
    #: after `drop`), so viewers can subscribe to a manager the session just (re)bound.
    on_built: Callable[[str], None] = lambda key: None
    #: The runtime's `--sandbox` settings (`host.sandbox.SandboxSettings`; None: no sandbox).
    sandbox_settings: Any = None
    _shared: dict[str, Any] = field(default_factory=dict)
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

    def drop(self, key: str) -> Any | None:
        """Forget the instance of `key` (after its cleanup succeeded); the next `shared`
        call for it builds a fresh one. Returns the dropped instance, if any."""
        return self._shared.pop(key, None)

    def peek(self, key: str) -> Any | None:
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

    `applies_hooks`: the tools run the invocation hooks themselves (after normalizing
    their arguments, as the spec orders); otherwise the runtime runs them before the call.
    """

    capability: str
    names: tuple[str, ...]
    build: ToolBuilder
    applies_hooks: bool = False


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
        if isinstance(binding, list):
            bindings.extend(binding)
        elif binding is not None:
            bindings.append(binding)
    return bindings


def output_owner(services: SessionServices) -> Any:
    """The session's one `OutputOwner` (recovery files); closed last, at session end."""

    def make() -> Any:
        from pct_runtime.output import OutputOwner

        return OutputOwner()

    async def close(owner: Any) -> None:
        leftovers = await owner.close()
        if leftovers:
            _log.warning("recovery files could not be removed: %s", ", ".join(leftovers))

    return services.shared("output", make, close)


async def _close_manager(manager: Any) -> None:
    await manager.close()


def session_sandbox(services: SessionServices) -> Any:
    """The session's `Sandbox` (writable roots from its directory); None without a sandbox."""
    settings = services.sandbox_settings
    if settings is None or not settings.confined:
        return None

    def make() -> Any:
        from pct_runtime.host.sandbox import Sandbox

        return Sandbox(settings, services.cwd)

    return services.shared("sandbox", make)


def _read_only(services: SessionServices) -> bool:
    settings = services.sandbox_settings
    return settings is not None and settings.mode == "read-only"


def shell_manager(services: SessionServices) -> Any:
    """The session's one `ShellManager`, shared by the direct tools and Code Mode."""

    def make() -> Any:
        from pct_runtime.capabilities.shell import ShellManager

        output = output_owner(services)  # created first, so it is closed after the manager
        return ShellManager(output, sandbox=session_sandbox(services))

    return services.shared("shell", make, _close_manager)


def _refusal_now(services: SessionServices, name: str) -> str | None:
    """The refusal a direct call to `name` gets under the committed plan (why a nested call
    to it is not admitted, e.g. `Shell Sessions are not enabled.`); None before a sync."""
    from pct_runtime.runtime_projection import refusal_for

    plan = services.plan()
    return None if plan is None else refusal_for(name, plan)


def code_manager(services: SessionServices) -> Any:
    """The session's current `CodeManager` (a fresh one after a confirmed disable cleanup)."""
    from pct_runtime.capabilities.code.adapters import create_adapters
    from pct_runtime.capabilities.code.manager import CodeManager

    def make() -> Any:
        shell_manager(services)  # output, shell, code: closed in reverse order

        def approval_mode() -> str:
            config = services.config()
            return str(config.code_mode.approval_mode) if config is not None else "confirm"

        read_only = _read_only(services)
        adapters: list[Any] = create_adapters(shell_manager(services), apply_patch=not read_only)
        if read_only:
            from pct_runtime.runtime_sandbox import ReadOnlyPatchAdapter

            adapters.append(ReadOnlyPatchAdapter())
        return CodeManager(
            output_owner(services),
            adapters,
            admitted=services.admitted,
            refusal=lambda name: _refusal_now(services, name),
            approval_mode=approval_mode,
            hooks=services.hooks,
            sandbox=session_sandbox(services),
        )

    # close() raises cleanup-incomplete naming unconfirmed cells; the session's aclose()
    # logs it and still runs the remaining steps (shell, output files).
    return services.shared("code", make, _close_manager)


def _apply_patch_binding() -> CapabilityBinding:
    from pct_runtime.capabilities.apply_patch.tool import create_apply_patch_tool
    from pct_runtime.host.names import APPLY_PATCH_TOOL

    def build(services: SessionServices) -> Sequence[Tool]:
        def admission() -> None:
            services.admit(APPLY_PATCH_TOOL, "direct")

        tool: Tool = create_apply_patch_tool(hooks=services.hooks, admission=admission)
        if _read_only(services):
            from pct_runtime.runtime_sandbox import ReadOnlyPatchTool

            tool = ReadOnlyPatchTool(tool)
        return [tool]

    return CapabilityBinding("apply_patch", (APPLY_PATCH_TOOL,), build, applies_hooks=True)


def _shell_binding() -> CapabilityBinding:
    from pct_runtime.capabilities.shell import create_shell_tools
    from pct_runtime.host.names import SHELL_TOOLS

    def build(services: SessionServices) -> Sequence[Tool]:
        def admission() -> None:
            for name in SHELL_TOOLS:
                services.admit(name, "direct")

        return create_shell_tools(shell_manager(services), services.hooks, admission)

    return CapabilityBinding("shell_sessions", SHELL_TOOLS, build, applies_hooks=True)


def _code_binding() -> CapabilityBinding:
    from pct_runtime.capabilities.code.tools import create_code_tools
    from pct_runtime.host.names import CODE_MODE_TOOLS

    def build(services: SessionServices) -> Sequence[Tool]:
        code_manager(services)  # built with the session, as before: output, shell, code
        return create_code_tools(lambda: code_manager(services), session_sandbox(services))

    return CapabilityBinding("code_mode", CODE_MODE_TOOLS, build)


def _discovery_binding() -> CapabilityBinding:
    from pct_runtime.capabilities.discovery import FindToolsTool
    from pct_runtime.host.names import FIND_TOOLS_TOOL
    from pct_runtime.runtime_discovery import SessionDiscovery

    return CapabilityBinding(
        "tool_discovery",
        (FIND_TOOLS_TOOL,),
        lambda services: [FindToolsTool(SessionDiscovery(services))],
    )


def _openai_and_computer_use_bindings() -> list[CapabilityBinding]:
    from pct_runtime.runtime_bindings import (
        computer_use_binding,
        image_binding,
        web_search_binding,
    )

    return [web_search_binding(), image_binding(), computer_use_binding()]


_BINDING_FACTORIES: list[Callable[[], CapabilityBinding | list[CapabilityBinding] | None]] = [
    _apply_patch_binding,
    _shell_binding,
    _code_binding,
    _discovery_binding,
    _openai_and_computer_use_bindings,
]
