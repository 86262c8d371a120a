"""Shell Sessions' descriptor: `exec_command` / `write_stdin`, the session's one shell
manager (shared with Code Mode's nested calls) and what a sync does to it."""

from __future__ import annotations

from collections.abc import Hashable, Sequence

from pct_runtime.capabilities.base import Tool, ToolSpec
from pct_runtime.capabilities.context import CapabilityContext, Key, Slots
from pct_runtime.capabilities.descriptor import Cleanup, Descriptor
from pct_runtime.capabilities.shell.gate import CommandGate, policy_of
from pct_runtime.capabilities.shell.manager import ShellManager
from pct_runtime.capabilities.shell.policy import CommandPolicy
from pct_runtime.capabilities.shell.tools import (
    EXEC_COMMAND_SPEC,
    WRITE_STDIN_SPEC,
    create_shell_tools,
)
from pct_runtime.config.commands import CommandsFields

#: The session's one shell manager, shared by the direct tools and Code Mode (viewers peek).
SHELL: Key[ShellManager] = Key("shell")
#: The session's one command policy gate, so a "yes for this session" answer holds for
#: direct and nested `exec_command` alike.
COMMAND_GATE: Key[CommandGate] = Key("command-gate")


async def _close(manager: ShellManager) -> None:
    await manager.close()


def session_shell(context: CapabilityContext) -> ShellManager:
    """The session's one `ShellManager`, shared by the direct tools and Code Mode."""

    def make() -> ShellManager:
        output = context.output()  # created first, so it is closed after the manager
        return ShellManager(output, sandbox=context.sandbox())

    return context.slots.get(SHELL, make, _close)


def session_gate(context: CapabilityContext) -> CommandGate:
    """The session's one command gate; it judges by the runtime's current `pct.commands`,
    parsed into a policy once per change of the section."""
    cache: dict[CommandsFields, CommandPolicy] = {}

    def current() -> CommandPolicy:
        fields = context.commands()
        if fields not in cache:
            cache.clear()
            cache[fields] = policy_of(fields)
        return cache[fields]

    return context.slots.get(COMMAND_GATE, lambda: CommandGate(current))


async def _cleanup(slots: Slots, kept: bool, settings: Hashable) -> bool:
    """Closed while the plan no longer needs a shell backend (or a previous close did not
    confirm), reopened once it does: the manager keeps its identity, so viewers stay
    subscribed, and the output owner stays, so recovery files live on."""
    shell = slots.peek(SHELL)
    if shell is None or (kept and not shell.closed):
        return False
    await shell.close()
    if kept:
        shell.reopen()
    return True


def _specs() -> Sequence[ToolSpec]:
    return [EXEC_COMMAND_SPEC, WRITE_STDIN_SPEC]


def _bind(context: CapabilityContext) -> Sequence[Tool]:
    return create_shell_tools(session_shell(context), session_gate(context))


DESCRIPTORS: tuple[Descriptor, ...] = (
    Descriptor(
        "shell_sessions",
        _specs,
        _bind,
        starts=(EXEC_COMMAND_SPEC.name,),
        cleanup=Cleanup(_cleanup),
    ),
)
