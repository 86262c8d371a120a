"""Shell Sessions' descriptor: `exec_command` / `write_stdin` and their session binding."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from pct_runtime.capabilities.base import Tool, ToolSpec
from pct_runtime.capabilities.descriptor import Descriptor
from pct_runtime.capabilities.shell.manager import ShellManager
from pct_runtime.capabilities.shell.tools import (
    EXEC_COMMAND_SPEC,
    WRITE_STDIN_SPEC,
    create_shell_tools,
)
from pct_runtime.host.names import SHELL_TOOLS
from pct_runtime.invocation import InvocationHooks


class ShellServices(Protocol):
    """What the shell binding asks of its session."""

    @property
    def hooks(self) -> InvocationHooks | None: ...

    def admit(self, name: str, path: str) -> None: ...

    def shell_manager(self) -> ShellManager:
        """The session's one manager, shared with Code Mode's nested calls."""
        ...


def _specs() -> Sequence[ToolSpec]:
    return [EXEC_COMMAND_SPEC, WRITE_STDIN_SPEC]


def _bind(services: ShellServices) -> Sequence[Tool]:
    def admission() -> None:
        for name in SHELL_TOOLS:
            services.admit(name, "direct")

    return create_shell_tools(services.shell_manager(), services.hooks, admission)


DESCRIPTORS: tuple[Descriptor[ShellServices], ...] = (Descriptor("shell_sessions", _specs, _bind),)
