"""Bindings of the OpenAI capabilities and Computer Use into runtime sessions.

Kept apart from `runtime_tools` (the binding mechanism and the execution capabilities):
these builders take live getters — config, model registry, the session's model — so a
reload or a model switch is seen on the next call. Whether a tool is active is decided
by the decision layer; these never decide it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pct_runtime.capabilities.base import CallContext, Tool
from pct_runtime.runtime_tools import CapabilityBinding, SessionServices


def web_search_binding() -> CapabilityBinding:
    from pct_runtime.capabilities.openai.factory import build_web_search_tool
    from pct_runtime.host.names import WEB_SEARCH_TOOL

    def build(services: SessionServices) -> Sequence[Tool]:
        return [
            build_web_search_tool(
                config=services.config,
                registry=services.models,
                agent_dir=lambda: services.agent_dir,
                debug=services.debug,
            )
        ]

    return CapabilityBinding("web_search", (WEB_SEARCH_TOOL,), build)


def image_binding() -> CapabilityBinding:
    from pct_runtime.capabilities.openai.factory import build_image_tool
    from pct_runtime.decide.routes import inspect_image_executor
    from pct_runtime.host.models import Model
    from pct_runtime.host.names import IMAGE_GENERATION_TOOL

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

    return CapabilityBinding("image_generation", (IMAGE_GENERATION_TOOL,), build)


def computer_use_binding() -> CapabilityBinding:
    from pct_runtime.capabilities.computer_use.lifecycle import ComputerUseLifecycle
    from pct_runtime.capabilities.computer_use.tools import create_computer_use_tools
    from pct_runtime.host.names import COMPUTER_USE_TOOLS

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

    return CapabilityBinding("computer_use", COMPUTER_USE_TOOLS, build)
