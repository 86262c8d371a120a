"""Spawning a process inside a session's sandbox (or plainly, without one).

`spawn_process` is the one call spawn sites make. Without a sandbox it is
`asyncio.create_subprocess_exec`. On Linux the process is created by the ruleset's confined
spawner thread (see `linux.py`) and waited for through a pidfd; on macOS the argv goes behind
`sandbox-exec`.
"""

from __future__ import annotations

import asyncio
import errno
import os
import subprocess
from collections.abc import Sequence
from concurrent.futures import BrokenExecutor, Future
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


def _refused(exc: BaseException) -> OSError:
    return OSError(
        errno.EPERM, f"the sandbox could not be applied, so nothing ran ({exc or type(exc)})"
    )


def _popen(argv: list[str], kwargs: dict[str, Any]) -> subprocess.Popen[bytes]:
    return subprocess.Popen(argv, **kwargs)


def _submit(sandbox: Sandbox, argv: Sequence[str], kwargs: dict[str, Any]) -> Future[Any]:
    spawner = sandbox.spawner()
    assert spawner is not None
    try:
        return spawner.submit(_popen, list(argv), kwargs)
    except BrokenExecutor as exc:
        raise _refused(exc) from None


async def spawn_process(sandbox: Sandbox | None, argv: Sequence[str], **kwargs: Any) -> Any:
    """Start `argv` confined by `sandbox` (None: unconfined); `kwargs` are `Popen`'s.

    Returns an object with `pid` and `async wait() -> returncode`. Raises OSError when the
    process could not be started, including when the sandbox could not be applied.
    """
    if sandbox is None or sandbox.spawner() is None:
        wrapped = sandbox.wrap(argv) if sandbox is not None else list(argv)
        return await asyncio.create_subprocess_exec(*wrapped, **kwargs)
    try:
        popen = await asyncio.wrap_future(_submit(sandbox, argv, kwargs))
    except BrokenExecutor as exc:
        raise _refused(exc) from None
    return ConfinedProcess(popen)


def popen(sandbox: Sandbox | None, argv: Sequence[str], **kwargs: Any) -> subprocess.Popen[bytes]:
    """`subprocess.Popen` (blocking), confined by `sandbox` like `spawn_process`."""
    if sandbox is None or sandbox.spawner() is None:
        wrapped = sandbox.wrap(argv) if sandbox is not None else list(argv)
        return subprocess.Popen(wrapped, **kwargs)
    try:
        result: subprocess.Popen[bytes] = _submit(sandbox, argv, kwargs).result()
    except BrokenExecutor as exc:
        raise _refused(exc) from None
    return result
