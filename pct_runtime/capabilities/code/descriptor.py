"""Code Mode's descriptor: `exec` / `wait`, the session's Code Mode manager and what a sync
does to it.

A cell's nested calls go through the session's call pipeline by tool name
(`context.calls`), so nothing here imports the capabilities it calls. The session binds in
the capability list's order, Shell Sessions before Code Mode, so its output owner and shell
manager are built (and closed) around Code Mode's: output, shell, code, closed in reverse."""

from __future__ import annotations

from collections.abc import Hashable, Sequence

from pct_runtime.capabilities.base import Tool, ToolSpec
from pct_runtime.capabilities.code.manager import CodeManager
from pct_runtime.capabilities.code.tools import create_code_tools
from pct_runtime.capabilities.context import CapabilityContext, Key, Slots
from pct_runtime.capabilities.descriptor import Cleanup, Descriptor
from pct_runtime.host.pi.names import CODE_MODE_TOOLS

#: The session's Code Mode manager (viewers peek at it).
CODE: Key[CodeManager] = Key("code")


async def _close(manager: CodeManager) -> None:
    # close() raises cleanup-incomplete naming unconfirmed cells; the session's aclose()
    # logs it and still runs the remaining steps (shell, output files).
    await manager.close()


def session_code(context: CapabilityContext) -> CodeManager:
    """The session's current `CodeManager` (a fresh one after a confirmed disable cleanup)."""

    def make() -> CodeManager:
        def approval_mode() -> str:
            return context.config().code_mode.approval_mode

        return CodeManager(
            context.output(),
            context.calls,
            admitted=context.admitted,
            refusal=context.refusal,
            approval_mode=approval_mode,
            sandbox=context.sandbox(),
        )

    return context.slots.get(CODE, make, _close)


def _busy(manager: CodeManager) -> bool:
    """Cells or worker processes (an idle manager needs no cleanup, and keeping it keeps
    viewers subscribed)."""
    return bool(manager.cells() or manager.worker_pids())


async def _cleanup(slots: Slots, kept: bool, settings: Hashable) -> bool:
    """Closed when Code is no longer routed and busy (or a previous close did not confirm);
    a confirmed close drops it, so the next call binds a fresh manager."""
    code = slots.peek(CODE)
    if code is None or not (code.closed or (not kept and _busy(code))):
        return False
    await code.close()
    slots.drop(CODE)
    return True


def _no_manager() -> CodeManager:
    raise RuntimeError("tool definitions only: no Code Mode manager is built")


def _specs() -> Sequence[ToolSpec]:
    # The definitions do not depend on the manager; none is built or touched.
    return [tool.spec for tool in create_code_tools(_no_manager)]


def _bind(context: CapabilityContext) -> Sequence[Tool]:
    session_code(context)  # built with the session, as before: output, shell, code
    return create_code_tools(lambda: session_code(context), context.sandbox())


DESCRIPTORS: tuple[Descriptor, ...] = (
    Descriptor(
        "code_mode",
        _specs,
        _bind,
        starts=(CODE_MODE_TOOLS[0],),
        cleanup=Cleanup(_cleanup, reports_pending=True),
    ),
)
