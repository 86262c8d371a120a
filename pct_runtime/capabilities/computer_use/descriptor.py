"""Computer Use's descriptor: the six tools, their session binding and what a sync does to
the bridge (its host probe is `probe.py`, which a status loads without this module).

The bridge (`ComputerUseLifecycle`) is built on a session's first call only: a session
that never uses Computer Use starts nothing.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from typing import TYPE_CHECKING

from pct_runtime.capabilities.base import CallContext, Tool, ToolSpec
from pct_runtime.capabilities.computer_use.tools import (
    METHODS,
    create_computer_use_tools,
    tool_spec,
)
from pct_runtime.capabilities.context import CapabilityContext, Key, Slots
from pct_runtime.capabilities.descriptor import Cleanup, Descriptor
from pct_runtime.config.schema import ApprovalMode, ToolkitConfig

if TYPE_CHECKING:  # the bridge's classes, loaded on a session's first call
    from pct_runtime.capabilities.computer_use.client import ComputerUseClient
    from pct_runtime.capabilities.computer_use.lifecycle import ComputerUseLifecycle

#: The session's slot of its lifecycle (the sync's cleanup reads it).
LIFECYCLE: Key[ComputerUseLifecycle] = Key("computer_use")


def _specs() -> Sequence[ToolSpec]:
    return [tool_spec(method) for method in METHODS]


def _bind(services: CapabilityContext) -> Sequence[Tool]:
    def make() -> ComputerUseLifecycle:
        # The bridge (its client, asyncio subprocess and approval modules) loads on a
        # session's first Computer Use call: every session binds the tools, most never call
        # them, and `pct serve` answers `initialize` only after its session is bound.
        from pct_runtime.capabilities.computer_use.lifecycle import ComputerUseLifecycle

        lifecycle = ComputerUseLifecycle(debug=services.debug)
        services.on_close(lifecycle.close)
        return lifecycle

    async def provider(ctx: CallContext) -> ComputerUseClient | None:
        lifecycle = services.slots.get(LIFECYCLE, make)
        config: ToolkitConfig | None = services.config()
        mode = config.computer_use.approval_mode if config is not None else None
        return await lifecycle.acquire(mode)

    return create_computer_use_tools(provider)


def _approval_mode(config: ToolkitConfig | None) -> ApprovalMode:
    return config.computer_use.approval_mode if config is not None else "confirm"


async def _cleanup(slots: Slots, kept: bool, mode: Hashable) -> bool:
    """Reset the client when the decision is no longer active or deferred (off,
    ineligible, conflict); otherwise apply the current approval mode."""
    lifecycle = slots.peek(LIFECYCLE)
    if lifecycle is None:
        return False
    if not kept:
        await lifecycle.reset()
    else:
        await lifecycle.set_approval_mode("always" if mode == "always" else "confirm")
    return False


DESCRIPTORS: tuple[Descriptor, ...] = (
    Descriptor(
        "computer_use",
        _specs,
        _bind,
        cleanup=Cleanup(_cleanup, _approval_mode),
    ),
)
