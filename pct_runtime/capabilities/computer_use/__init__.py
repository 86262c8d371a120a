"""Computer Use: eligibility probe, ChatGPT app-server bridge, six tools and approvals."""

from __future__ import annotations

from typing import TYPE_CHECKING

from pct_runtime.capabilities.computer_use.approval import (
    APPROVAL_TITLE,
    ApprovalMode,
    validate_elicitation,
)
from pct_runtime.capabilities.computer_use.eligibility import (
    CHATGPT_RESOURCES,
    ComputerUseProbe,
    ComputerUseProbeLike,
    ComputerUseRuntime,
    ComputerUseRuntimeReason,
    RuntimeInspection,
    inspect_runtime,
    real_codex_home,
)
from pct_runtime.capabilities.computer_use.errors import ComputerUseClientError
from pct_runtime.capabilities.computer_use.tools import (
    COMPUTER_USE_TOOL_NAMES,
    INACTIVE_TEXT,
    ClientProvider,
    ComputerUseInvoker,
    create_computer_use_tools,
    validate_arguments,
)

if TYPE_CHECKING:
    from pct_runtime.capabilities.computer_use.client import ComputerUseClient
    from pct_runtime.capabilities.computer_use.lifecycle import ComputerUseLifecycle


def __getattr__(name: str) -> object:
    """The bridge's client and lifecycle (asyncio under them) load on first use: `pct status`
    imports this package for its probe, which needs neither."""
    if name == "ComputerUseClient":
        from pct_runtime.capabilities.computer_use.client import ComputerUseClient

        return ComputerUseClient
    if name == "ComputerUseLifecycle":
        from pct_runtime.capabilities.computer_use.lifecycle import ComputerUseLifecycle

        return ComputerUseLifecycle
    raise AttributeError(name)


__all__ = [
    "APPROVAL_TITLE",
    "CHATGPT_RESOURCES",
    "COMPUTER_USE_TOOL_NAMES",
    "INACTIVE_TEXT",
    "ApprovalMode",
    "ClientProvider",
    "ComputerUseClient",
    "ComputerUseClientError",
    "ComputerUseInvoker",
    "ComputerUseLifecycle",
    "ComputerUseProbe",
    "ComputerUseProbeLike",
    "ComputerUseRuntime",
    "ComputerUseRuntimeReason",
    "RuntimeInspection",
    "create_computer_use_tools",
    "inspect_runtime",
    "real_codex_home",
    "validate_arguments",
    "validate_elicitation",
]
