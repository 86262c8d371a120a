"""Shell Sessions' descriptor: `exec_command` / `write_stdin`, the session's one shell
manager (shared with Code Mode's nested calls) and what a sync does to it."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Hashable, Sequence
from typing import Protocol, TypeVar, cast

from pct_runtime.capabilities.base import Tool, ToolSpec
from pct_runtime.capabilities.descriptor import Cleanup, Descriptor, SessionStore
from pct_runtime.capabilities.shell.gate import CommandGate, policy_of
from pct_runtime.capabilities.shell.manager import ShellManager
from pct_runtime.capabilities.shell.policy import CommandPolicy
from pct_runtime.capabilities.shell.tools import (
    EXEC_COMMAND_SPEC,
    WRITE_STDIN_SPEC,
    create_shell_tools,
)
from pct_runtime.config.commands import CommandsFields
from pct_runtime.host.names import SHELL_TOOLS
from pct_runtime.host.sandbox import Sandbox
from pct_runtime.invocation import InvocationHooks
from pct_runtime.output import OutputOwner

T = TypeVar("T")

#: The session's shared-store key of its shell manager (viewers peek at it).
SHARED_KEY = "shell"
#: The session's shared-store key of its command policy gate.
GATE_KEY = "command-gate"


class ShellServices(Protocol):
    """What the shell binding asks of its session."""

    @property
    def hooks(self) -> InvocationHooks | None: ...

    def admit(self, name: str, path: str) -> None: ...

    def output(self) -> OutputOwner:
        """The session's output owner (recovery files live until the session ends)."""
        ...

    def sandbox(self) -> Sandbox | None: ...

    def commands(self) -> CommandsFields:
        """The runtime's current `pct.commands` (changes on reload and save)."""
        ...

    def shared(
        self,
        key: str,
        factory: Callable[[], T],
        close: Callable[[T], Awaitable[None]] | None = None,
    ) -> T: ...


async def _close(manager: ShellManager) -> None:
    await manager.close()


def session_shell(services: ShellServices) -> ShellManager:
    """The session's one `ShellManager`, shared by the direct tools and Code Mode."""

    def make() -> ShellManager:
        output = services.output()  # created first, so it is closed after the manager
        return ShellManager(output, sandbox=services.sandbox())

    return services.shared(SHARED_KEY, make, _close)


def session_gate(services: ShellServices) -> CommandGate:
    """The session's one command gate, shared by direct and nested `exec_command`, so a
    "yes for this session" answer holds for both."""
    cache: dict[CommandsFields, CommandPolicy] = {}

    def current() -> CommandPolicy:
        fields = services.commands()
        if fields not in cache:
            cache.clear()
            cache[fields] = policy_of(fields)
        return cache[fields]

    return services.shared(GATE_KEY, lambda: CommandGate(current))


async def _cleanup(store: SessionStore, kept: bool, settings: Hashable) -> bool:
    """Closed while the plan no longer needs a shell backend (or a previous close did not
    confirm), reopened once it does: the manager keeps its identity, so viewers stay
    subscribed, and the output owner stays, so recovery files live on."""
    # The store holds what `shared` built under this key (a test may put a double there).
    shell = cast("ShellManager | None", store.peek(SHARED_KEY))
    if shell is None or (kept and not shell.closed):
        return False
    await shell.close()
    if kept:
        shell.reopen()
    return True


def _specs() -> Sequence[ToolSpec]:
    return [EXEC_COMMAND_SPEC, WRITE_STDIN_SPEC]


def _bind(services: ShellServices) -> Sequence[Tool]:
    def admission() -> None:
        for name in SHELL_TOOLS:
            services.admit(name, "direct")

    return create_shell_tools(
        session_shell(services), services.hooks, admission, session_gate(services)
    )


DESCRIPTORS: tuple[Descriptor[ShellServices], ...] = (
    Descriptor(
        "shell_sessions",
        _specs,
        _bind,
        starts=(EXEC_COMMAND_SPEC.name,),
        cleanup=Cleanup(_cleanup),
    ),
)
