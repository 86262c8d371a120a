"""Computer Use's descriptor: the six tools and their session binding.

The bridge (`ComputerUseLifecycle`) is built on a session's first call only: a session
that never uses Computer Use starts nothing.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import Protocol, TypeVar

from pct_runtime.capabilities.base import CallContext, Tool, ToolSpec
from pct_runtime.capabilities.computer_use.client import ComputerUseClient
from pct_runtime.capabilities.computer_use.lifecycle import ComputerUseLifecycle
from pct_runtime.capabilities.computer_use.tools import (
    METHODS,
    create_computer_use_tools,
    tool_spec,
)
from pct_runtime.capabilities.descriptor import Descriptor
from pct_runtime.config.schema import ToolkitConfig
from pct_runtime.debug import DebugSink

T = TypeVar("T")

#: The session's shared-store key of its lifecycle (the runtime's cleanups read it).
SHARED_KEY = "computer_use"


class ComputerUseServices(Protocol):
    """What the Computer Use binding asks of its session."""

    @property
    def debug(self) -> DebugSink: ...

    def config(self) -> ToolkitConfig: ...

    def on_close(self, closer: Callable[[], Awaitable[None]]) -> None: ...

    def shared(self, key: str, factory: Callable[[], T]) -> T: ...


def _specs() -> Sequence[ToolSpec]:
    return [tool_spec(method) for method in METHODS]


def _bind(services: ComputerUseServices) -> Sequence[Tool]:
    def make() -> ComputerUseLifecycle:
        lifecycle = ComputerUseLifecycle(debug=services.debug)
        services.on_close(lifecycle.close)
        return lifecycle

    async def provider(ctx: CallContext) -> ComputerUseClient | None:
        lifecycle = services.shared(SHARED_KEY, make)
        config: ToolkitConfig | None = services.config()
        mode = config.computer_use.approval_mode if config is not None else None
        return await lifecycle.acquire(mode)

    return create_computer_use_tools(provider)


DESCRIPTORS: tuple[Descriptor[ComputerUseServices], ...] = (
    Descriptor("computer_use", _specs, _bind),
)
