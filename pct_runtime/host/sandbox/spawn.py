"""Spawning a process inside a session's sandbox (or plainly, without one).

`spawn_process` is the one call spawn sites make. Without a sandbox it is
`asyncio.create_subprocess_exec`. On Linux the process is created by the ruleset's confined
spawner thread (see `linux.py`) and waited for through a pidfd; on macOS the argv goes behind
`sandbox-exec`.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from pct_runtime.host.sandbox import Sandbox


class SpawnedProcess(Protocol):
    @property
    def pid(self) -> int: ...

    async def wait(self) -> int: ...


class ConfinedProcess:
    """A child created by a spawner thread, waited for on the event loop through a pidfd."""

    def __init__(self, popen: subprocess.Popen[bytes]) -> None:
        self._popen = popen
        self.pid = popen.pid

    @property
    def returncode(self) -> int | None:
        return self._popen.returncode

    async def wait(self) -> int:
        loop = asyncio.get_running_loop()
        pidfd = os.pidfd_open(self.pid)  # the child is not reaped yet: poll() below does it
        try:
            while (code := self._popen.poll()) is None:
                readable: asyncio.Future[None] = loop.create_future()
                loop.add_reader(pidfd, _wake, readable)
                try:
                    await readable
                finally:
                    loop.remove_reader(pidfd)
            return code
        finally:
            os.close(pidfd)


def _wake(future: asyncio.Future[None]) -> None:
    if not future.done():
        future.set_result(None)


async def spawn_process(
    sandbox: Sandbox | None, argv: Sequence[str], **kwargs: Any
) -> SpawnedProcess:
    """Start `argv` confined by `sandbox` (None: unconfined); `kwargs` are `Popen`'s.

    Returns an object with `pid` and `async wait() -> returncode`. Raises OSError when the
    process could not be started, including when the sandbox could not be applied. Like
    `asyncio.create_subprocess_exec`, the fork and exec happen synchronously.
    """
    spawner = sandbox.spawner() if sandbox is not None else None
    if spawner is None:
        wrapped = sandbox.wrap(argv) if sandbox is not None else list(argv)
        return await asyncio.create_subprocess_exec(*wrapped, **kwargs)
    return ConfinedProcess(spawner.popen(argv, **kwargs))


def popen(sandbox: Sandbox | None, argv: Sequence[str], **kwargs: Any) -> subprocess.Popen[bytes]:
    """`subprocess.Popen` (blocking), confined by `sandbox` like `spawn_process`."""
    spawner = sandbox.spawner() if sandbox is not None else None
    if spawner is None:
        wrapped = sandbox.wrap(argv) if sandbox is not None else list(argv)
        return subprocess.Popen(wrapped, **kwargs)
    return spawner.popen(argv, **kwargs)
