"""Every capability's binding into runtime sessions, and `default_bindings()`.

A binding names the tools a capability provides and builds them for one session from
that session's `SessionServices`. The OpenAI capabilities and Computer Use take live
getters — config, model registry, the session's model — so a reload or a model switch is
seen on the next call. Whether a tool is active is decided by the decision layer; these
never decide it.

Each factory imports its capability inside the function, deliberately: `pct` stays fast
and a capability that fails to import disables only itself (logged), never the runtime.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from typing import Any

from pct_runtime.capabilities.base import CallContext, Tool
from pct_runtime.decide.registry import BY_KEY
from pct_runtime.decide.routes import inspect_image_executor
from pct_runtime.host.models import Model
from pct_runtime.host.names import APPLY_PATCH_TOOL, SHELL_TOOLS
from pct_runtime.runtime.discovery import SessionDiscovery
from pct_runtime.runtime.managers import code_manager, read_only, session_sandbox, shell_manager
from pct_runtime.runtime.sandbox import ReadOnlyPatchTool
from pct_runtime.runtime.services import CapabilityBinding, SessionServices, ToolBuilder

_log = logging.getLogger(__name__)


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


def _binding(key: str, build: ToolBuilder) -> CapabilityBinding:
    """A binding whose tool names are its registry row's, so the two cannot drift."""
    return CapabilityBinding(key, BY_KEY[key].tools, build)


def _apply_patch_binding() -> CapabilityBinding:
    # Deferred: start-up time, and a capability that fails to import disables only itself.
    from pct_runtime.capabilities.apply_patch.tool import create_apply_patch_tool

    def build(services: SessionServices) -> Sequence[Tool]:
        def admission() -> None:
            services.admit(APPLY_PATCH_TOOL, "direct")

        tool: Tool = create_apply_patch_tool(hooks=services.hooks, admission=admission)
        if read_only(services):
            tool = ReadOnlyPatchTool(tool)
        return [tool]

    return _binding("apply_patch", build)


def _shell_binding() -> CapabilityBinding:
    # Deferred: start-up time, and a capability that fails to import disables only itself.
    from pct_runtime.capabilities.shell import create_shell_tools

    def build(services: SessionServices) -> Sequence[Tool]:
        def admission() -> None:
            for name in SHELL_TOOLS:
                services.admit(name, "direct")

        return create_shell_tools(shell_manager(services), services.hooks, admission)

    return _binding("shell_sessions", build)


def _code_binding() -> CapabilityBinding:
    # Deferred: start-up time, and a capability that fails to import disables only itself.
    from pct_runtime.capabilities.code.tools import create_code_tools

    def build(services: SessionServices) -> Sequence[Tool]:
        code_manager(services)  # built with the session, as before: output, shell, code
        return create_code_tools(lambda: code_manager(services), session_sandbox(services))

    return _binding("code_mode", build)


def _discovery_binding() -> CapabilityBinding:
    # Deferred: start-up time, and a capability that fails to import disables only itself.
    from pct_runtime.capabilities.discovery import FindToolsTool

    return _binding("tool_discovery", lambda services: [FindToolsTool(SessionDiscovery(services))])


def _openai_and_computer_use_bindings() -> list[CapabilityBinding]:
    return [web_search_binding(), image_binding(), computer_use_binding()]


_BINDING_FACTORIES: list[Callable[[], CapabilityBinding | list[CapabilityBinding] | None]] = [
    _apply_patch_binding,
    _shell_binding,
    _code_binding,
    _discovery_binding,
    _openai_and_computer_use_bindings,
]


def web_search_binding() -> CapabilityBinding:
    # Deferred: start-up time, and a capability that fails to import disables only itself.
    from pct_runtime.capabilities.openai.factory import build_web_search_tool

    def build(services: SessionServices) -> Sequence[Tool]:
        return [
            build_web_search_tool(
                config=services.config,
                registry=services.models,
                agent_dir=lambda: services.agent_dir,
                debug=services.debug,
            )
        ]

    return _binding("web_search", build)


def image_binding() -> CapabilityBinding:
    # Deferred: start-up time, and a capability that fails to import disables only itself.
    from pct_runtime.capabilities.openai.factory import build_image_tool

    def build(services: SessionServices) -> Sequence[Tool]:
        def pick() -> Model | str:
            # The decision layer's choice: the current model's official route, else any
            # available openai-codex, else any openai model.
            inspection = inspect_image_executor(services.model(), services.models())
            if inspection.ok and inspection.model is not None:
                return inspection.model
            return inspection.reason or "missing-openai-auth"

        def has_vision() -> bool | None:
            model = services.model()
            return None if model is None else model.has_image_input

        return [
            build_image_tool(
                pick_model=pick,
                registry=services.models,
                agent_dir=lambda: services.agent_dir,
                model_has_vision=has_vision,
                debug=services.debug,
            )
        ]

    return _binding("image_generation", build)


def computer_use_binding() -> CapabilityBinding:
    # Deferred: start-up time, and a capability that fails to import disables only itself.
    from pct_runtime.capabilities.computer_use.lifecycle import ComputerUseLifecycle
    from pct_runtime.capabilities.computer_use.tools import create_computer_use_tools

    def build(services: SessionServices) -> Sequence[Tool]:
        def make() -> ComputerUseLifecycle:
            lifecycle = ComputerUseLifecycle(debug=services.debug)
            services.on_close(lifecycle.close)
            return lifecycle

        async def provider(ctx: CallContext) -> Any:
            # Built on first call only: a session that never uses Computer Use starts nothing.
            lifecycle = services.shared("computer_use", make)
            config = services.config()
            mode = config.computer_use.approval_mode if config is not None else None
            return await lifecycle.acquire(mode)

        return create_computer_use_tools(provider)

    return _binding("computer_use", build)
