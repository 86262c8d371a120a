"""Computer Use: eligibility probe, ChatGPT app-server bridge, six tools and approvals."""

from __future__ import annotations

from typing import TYPE_CHECKING

from pct_runtime import lazy

if TYPE_CHECKING:
    from pct_runtime.capabilities.computer_use.approval import (
        APPROVAL_TITLE,
        ApprovalMode,
        validate_elicitation,
    )
    from pct_runtime.capabilities.computer_use.client import (
        ComputerUseClient,
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
    from pct_runtime.capabilities.computer_use.errors import (
        ComputerUseClientError,
    )
    from pct_runtime.capabilities.computer_use.lifecycle import (
        ComputerUseLifecycle,
    )
    from pct_runtime.capabilities.computer_use.tools import (
        COMPUTER_USE_TOOL_NAMES,
        INACTIVE_TEXT,
        ClientProvider,
        ComputerUseInvoker,
        create_computer_use_tools,
        validate_arguments,
    )

# Names load on first use: `pct status` imports this package for its declaration
# (`declaration.py`), which needs none of them.
_HOME: dict[str, str] = {
    "APPROVAL_TITLE": "pct_runtime.capabilities.computer_use.approval",
    "ApprovalMode": "pct_runtime.capabilities.computer_use.approval",
    "CHATGPT_RESOURCES": "pct_runtime.capabilities.computer_use.eligibility",
    "COMPUTER_USE_TOOL_NAMES": "pct_runtime.capabilities.computer_use.tools",
    "ClientProvider": "pct_runtime.capabilities.computer_use.tools",
    "ComputerUseClient": "pct_runtime.capabilities.computer_use.client",
    "ComputerUseClientError": "pct_runtime.capabilities.computer_use.errors",
    "ComputerUseInvoker": "pct_runtime.capabilities.computer_use.tools",
    "ComputerUseLifecycle": "pct_runtime.capabilities.computer_use.lifecycle",
    "ComputerUseProbe": "pct_runtime.capabilities.computer_use.eligibility",
    "ComputerUseProbeLike": "pct_runtime.capabilities.computer_use.eligibility",
    "ComputerUseRuntime": "pct_runtime.capabilities.computer_use.eligibility",
    "ComputerUseRuntimeReason": "pct_runtime.capabilities.computer_use.eligibility",
    "INACTIVE_TEXT": "pct_runtime.capabilities.computer_use.tools",
    "RuntimeInspection": "pct_runtime.capabilities.computer_use.eligibility",
    "create_computer_use_tools": "pct_runtime.capabilities.computer_use.tools",
    "inspect_runtime": "pct_runtime.capabilities.computer_use.eligibility",
    "real_codex_home": "pct_runtime.capabilities.computer_use.eligibility",
    "validate_arguments": "pct_runtime.capabilities.computer_use.tools",
    "validate_elicitation": "pct_runtime.capabilities.computer_use.approval",
}

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


__getattr__ = lazy.exports(__name__, _HOME)
