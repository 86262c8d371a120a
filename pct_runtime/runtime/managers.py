"""The managers a session shares between capabilities: output owner, sandbox, shell, code.

Each is created once per session through `SessionServices.shared`, on first use. A disable
cleanup (`runtime.apply`) closes the shell or code manager mid-session. The shell manager
keeps its identity (it reopens when the route returns, so viewers stay subscribed); a
closed code manager is `drop`ped and the code tools reach theirs through a getter, so the
next call binds a fresh one. The output owner is never closed before the session ends:
recovery files live until then.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Protocol, cast

from pct_runtime.host.sandbox import Sandbox
from pct_runtime.output import OutputOwner
from pct_runtime.runtime.projection import refusal_for
from pct_runtime.runtime.sandbox import ReadOnlyPatchAdapter
from pct_runtime.runtime.services import SessionServices

if TYPE_CHECKING:
    from pct_runtime.capabilities.code.adapters import CodeAdapter
    from pct_runtime.capabilities.code.manager import CodeManager as CodeManager
    from pct_runtime.capabilities.computer_use.lifecycle import ComputerUseLifecycle
    from pct_runtime.capabilities.shell import ShellManager as ShellManager

_log = logging.getLogger(__name__)


# Viewers and cleanups read what a session built without building it. The shared store holds
# one type per key (the builders below and in `bindings`), so the casts name that type.
def built_shell(services: SessionServices) -> ShellManager | None:
    return cast("ShellManager | None", services.peek("shell"))


def built_code(services: SessionServices) -> CodeManager | None:
    return cast("CodeManager | None", services.peek("code"))


def built_computer_use(services: SessionServices) -> ComputerUseLifecycle | None:
    return cast("ComputerUseLifecycle | None", services.peek("computer_use"))


def output_owner(services: SessionServices) -> OutputOwner:
    """The session's one `OutputOwner` (recovery files); closed last, at session end."""

    def make() -> OutputOwner:
        return OutputOwner()

    async def close(owner: OutputOwner) -> None:
        leftovers = await owner.close()
        if leftovers:
            _log.warning("recovery files could not be removed: %s", ", ".join(leftovers))

    return services.shared("output", make, close)


class _Closable(Protocol):
    async def close(self) -> object: ...


async def _close_manager(manager: _Closable) -> None:
    await manager.close()


def session_sandbox(services: SessionServices) -> Sandbox | None:
    """The session's `Sandbox` (writable roots from its directory); None without a sandbox."""
    settings = services.sandbox_settings
    if settings is None or not settings.confined:
        return None

    def make() -> Sandbox:
        return Sandbox(settings, services.cwd)

    return services.shared("sandbox", make)


def read_only(services: SessionServices) -> bool:
    settings = services.sandbox_settings
    return settings is not None and settings.mode == "read-only"


def shell_manager(services: SessionServices) -> ShellManager:
    """The session's one `ShellManager`, shared by the direct tools and Code Mode."""

    def make() -> ShellManager:
        # Deferred: capabilities load on first use (start-up time of `pct`).
        from pct_runtime.capabilities.shell import ShellManager as Manager

        output = output_owner(services)  # created first, so it is closed after the manager
        return Manager(output, sandbox=session_sandbox(services))

    return services.shared("shell", make, _close_manager)


def _refusal_now(services: SessionServices, name: str) -> str | None:
    """The refusal a direct call to `name` gets under the committed plan (why a nested call
    to it is not admitted, e.g. `Shell Sessions are not enabled.`); None before a sync."""
    plan = services.plan()
    return None if plan is None else refusal_for(name, plan)


def code_manager(services: SessionServices) -> CodeManager:
    """The session's current `CodeManager` (a fresh one after a confirmed disable cleanup)."""
    # Deferred: capabilities load on first use (start-up time of `pct`).
    from pct_runtime.capabilities.code.adapters import create_adapters
    from pct_runtime.capabilities.code.manager import CodeManager as Manager

    def make() -> CodeManager:
        shell_manager(services)  # output, shell, code: closed in reverse order

        def approval_mode() -> str:
            config = services.config()
            return str(config.code_mode.approval_mode) if config is not None else "confirm"

        confined = read_only(services)
        adapters: list[CodeAdapter] = create_adapters(
            shell_manager(services), apply_patch=not confined
        )
        if confined:
            adapters.append(ReadOnlyPatchAdapter())
        return Manager(
            output_owner(services),
            adapters,
            admitted=services.admitted,
            refusal=lambda name: _refusal_now(services, name),
            approval_mode=approval_mode,
            hooks=services.hooks,
            sandbox=session_sandbox(services),
        )

    # close() raises cleanup-incomplete naming unconfirmed cells; the session's aclose()
    # logs it and still runs the remaining steps (shell, output files).
    return services.shared("code", make, _close_manager)
