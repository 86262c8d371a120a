"""What a session shares between capabilities: the output owner and the sandbox; and the
viewers' read-only access to the managers capabilities built.

Each is created once per session through `SessionServices.shared`, on first use. The
capability managers themselves (shell, Code Mode, Computer Use) are built and cleaned up
by their descriptors (`capabilities/<name>/descriptor.py`); the output owner is never
closed before the session ends: recovery files live until then.
"""

from __future__ import annotations

import contextlib
import logging
from pathlib import Path
from typing import TYPE_CHECKING, cast

from pct_runtime.host.sandbox import Sandbox
from pct_runtime.output import OutputOwner, capture_root
from pct_runtime.runtime.services import SessionServices

if TYPE_CHECKING:
    # What a viewer holds of them, named here so a viewer needs no capability import.
    from pct_runtime.capabilities.code.manager import CellView as CellView
    from pct_runtime.capabilities.code.manager import CodeManager
    from pct_runtime.capabilities.shell import ShellManager
    from pct_runtime.capabilities.shell.job import ShellJob as ShellJob

_log = logging.getLogger(__name__)


# Viewers (the console's sessions screen, live control) read what a session built without
# building it; the descriptors store one type per key, so the casts name that type.
def built_shell(services: SessionServices) -> ShellManager | None:
    return cast("ShellManager | None", services.peek("shell"))


def built_code(services: SessionServices) -> CodeManager | None:
    return cast("CodeManager | None", services.peek("code"))


def output_owner(services: SessionServices) -> OutputOwner:
    """The session's one `OutputOwner` (recovery files); closed last, at session end."""

    def make() -> OutputOwner:
        return OutputOwner()

    async def close(owner: OutputOwner) -> None:
        leftovers = await owner.close()
        if leftovers:
            _log.warning("recovery files could not be removed: %s", ", ".join(leftovers))

    return services.shared("output", make, close)


def session_sandbox(services: SessionServices) -> Sandbox | None:
    """The session's `Sandbox` (writable roots from its directory); None without a sandbox."""
    settings = services.sandbox_settings
    if settings is None or not settings.confined:
        return None

    def make() -> Sandbox:
        readable: tuple[Path, ...] = ()  # no capture root: nothing of pct's to read
        with contextlib.suppress(OSError):
            readable = (capture_root(),)  # recovery files: jobs read them, never write them
        return Sandbox(settings, services.cwd, readable)

    return services.shared("sandbox", make)


def read_only(services: SessionServices) -> bool:
    settings = services.sandbox_settings
    return settings is not None and settings.mode == "read-only"
