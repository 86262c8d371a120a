"""Code Mode's descriptor: `exec` / `wait`, the session's Code Mode manager (over the
shell manager it drives, a declared seam) and what a sync does to it."""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from typing import Protocol, cast

from pct_runtime.capabilities.base import Tool, ToolSpec
from pct_runtime.capabilities.code.adapters import CodeAdapter, create_adapters
from pct_runtime.capabilities.code.manager import CodeManager
from pct_runtime.capabilities.code.readonly import ReadOnlyPatchAdapter
from pct_runtime.capabilities.code.tools import create_code_tools
from pct_runtime.capabilities.descriptor import Cleanup, Descriptor, SessionStore
from pct_runtime.capabilities.shell.descriptor import ShellServices, session_gate, session_shell
from pct_runtime.config.schema import ToolkitConfig
from pct_runtime.host.names import CODE_MODE_TOOLS

#: The session's shared-store key of its Code Mode manager (viewers peek at it).
SHARED_KEY = "code"


class CodeServices(ShellServices, Protocol):
    """What the Code Mode binding asks of its session."""

    def config(self) -> ToolkitConfig: ...

    def read_only(self) -> bool: ...

    def admitted(self) -> tuple[str, ...]:
        """The session's names admitted right now (visible plus nested-only)."""
        ...

    def refusal(self, name: str) -> str | None:
        """The refusal a direct call to `name` gets under the committed plan (why a nested
        call to it is not admitted); None before a sync."""
        ...


async def _close(manager: CodeManager) -> None:
    # close() raises cleanup-incomplete naming unconfirmed cells; the session's aclose()
    # logs it and still runs the remaining steps (shell, output files).
    await manager.close()


def session_code(services: CodeServices) -> CodeManager:
    """The session's current `CodeManager` (a fresh one after a confirmed disable cleanup)."""

    def make() -> CodeManager:
        shell = session_shell(services)  # output, shell, code: closed in reverse order

        def approval_mode() -> str:
            return services.config().code_mode.approval_mode

        confined = services.read_only()
        adapters: list[CodeAdapter] = create_adapters(
            shell, apply_patch=not confined, gate=session_gate(services)
        )
        if confined:
            adapters.append(ReadOnlyPatchAdapter())
        return CodeManager(
            services.output(),
            adapters,
            admitted=services.admitted,
            refusal=services.refusal,
            approval_mode=approval_mode,
            hooks=services.hooks,
            sandbox=services.sandbox(),
        )

    return services.shared(SHARED_KEY, make, _close)


def _busy(manager: CodeManager) -> bool:
    """Cells or worker processes (an idle manager needs no cleanup, and keeping it keeps
    viewers subscribed)."""
    return bool(manager.cells() or manager.worker_pids())


async def _cleanup(store: SessionStore, kept: bool, settings: Hashable) -> bool:
    """Closed when Code is no longer routed and busy (or a previous close did not confirm);
    a confirmed close drops it, so the next call binds a fresh manager."""
    # The store holds what `shared` built under this key (a test may put a double there).
    code = cast("CodeManager | None", store.peek(SHARED_KEY))
    if code is None or not (code.closed or (not kept and _busy(code))):
        return False
    await code.close()
    store.drop(SHARED_KEY)
    return True


def _no_manager() -> CodeManager:
    raise RuntimeError("tool definitions only: no Code Mode manager is built")


def _specs() -> Sequence[ToolSpec]:
    # The definitions do not depend on the manager; none is built or touched.
    return [tool.spec for tool in create_code_tools(_no_manager)]


def _bind(services: CodeServices) -> Sequence[Tool]:
    session_code(services)  # built with the session, as before: output, shell, code
    return create_code_tools(lambda: session_code(services), services.sandbox())


DESCRIPTORS: tuple[Descriptor[CodeServices], ...] = (
    Descriptor(
        "code_mode",
        _specs,
        _bind,
        starts=(CODE_MODE_TOOLS[0],),
        cleanup=Cleanup(_cleanup, reports_pending=True),
    ),
)
