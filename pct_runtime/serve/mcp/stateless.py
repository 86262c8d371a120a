"""The stateless MCP revision (2026-07-28) and the tools that need a session.

That revision has no handshake and no `Mcp-Session-Id`: every request stands alone, so the
server cannot tell its clients apart. All of them share one runtime session, and a tool
whose state outlives a call (a shell job, a Code Mode cell, a Computer Use app state) would
be shared too: one client could write to or terminate another's job. Those tools are
therefore hidden from such clients and refused with an error that says how to get them.
Tools whose work ends with the call (apply_patch, web search, image generation,
find_tools) are served as usual.
"""

from __future__ import annotations

from mcp_types.version import LATEST_HANDSHAKE_VERSION

from pct_runtime.capabilities.base import ToolError
from pct_runtime.host.pi.names import CODE_MODE_TOOLS, COMPUTER_USE_TOOLS, SHELL_TOOLS

SESSION_BOUND_TOOLS: frozenset[str] = frozenset(
    (*SHELL_TOOLS, *CODE_MODE_TOOLS, *COMPUTER_USE_TOOLS)
)


def session_required(name: str, protocol_version: str) -> ToolError:
    return ToolError(
        "session-required",
        f"{name} needs an MCP session, and this client uses protocol revision "
        f"{protocol_version}, which has none: pct keeps shell jobs and Code Mode cells "
        "private to one session. Connect with the initialize handshake (protocol "
        f"{LATEST_HANDSHAKE_VERSION} or earlier) to use it.",
    )
