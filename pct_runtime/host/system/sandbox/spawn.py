"""Spawning a process inside a session's sandbox (or plainly, without one).

`spawn_process` is the one call spawn sites make. Without a sandbox it is
`asyncio.create_subprocess_exec`. On Linux the process is created by the sandbox's server
inside its bubblewrap namespaces (`spawner.py`), which also reports its exit; on macOS the
argv goes behind `sandbox-exec`.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from pct_runtime.host.system.sandbox import Sandbox
    from pct_runtime.host.system.sandbox.spawner import ConfinedPopen


class SpawnedProcess(Protocol):
    @property
    def pid(self) -> int: ...

    async def wait(self) -> int: ...


class SpawnedPopen(Protocol):
    """What `popen` returns: `subprocess.Popen` or a process the sandbox server started."""

    @property
    def pid(self) -> int: ...

    @property
    def returncode(self) -> int | None: ...

    def poll(self) -> int | None: ...

    def wait(self, timeout: float | None = None) -> int: ...

    def kill(self) -> None: ...


class ConfinedProcess:
    """A child of the sandbox server, waited for on the event loop (its exit code comes
    from the server's reader thread)."""

    def __init__(self, popen: ConfinedPopen) -> None:
        self._popen = popen
        self.pid = popen.pid

    @property
    def returncode(self) -> int | None:
        return self._popen.returncode

    async def wait(self) -> int:
        loop = asyncio.get_running_loop()
        done: asyncio.Future[int] = loop.create_future()

        def exited(code: int) -> None:
            loop.call_soon_threadsafe(_settle, done, code)

        self._popen.on_exit(exited)
        return await done


class PidfdProcess:
    """An unconfined child whose exit the event loop reads from a pidfd.

    asyncio's own child watcher on Python 3.11 starts a thread per child to block in
    `waitpid`: a thread start and its GIL hand-offs on every `exec_command` (~15% of a
    `true` round trip's CPU). A pidfd is one fd on the loop instead, read once. Only this
    object reaps its child (the `Popen` is held until then).
    """

    def __init__(self, popen: subprocess.Popen[bytes]) -> None:
        self._popen = popen
        self.pid = popen.pid

    @property
    def returncode(self) -> int | None:
        return self._popen.returncode

    async def wait(self) -> int:
        code = self._popen.poll()
        if code is not None:
            return code
        loop = asyncio.get_running_loop()
        done: asyncio.Future[int] = loop.create_future()
        # Not reaped yet (only we reap it), so the pid still names this child.
        pidfd = os.pidfd_open(self.pid)

        def exited() -> None:
            code = self._popen.poll()
            if code is not None and not done.done():
                done.set_result(code)

        loop.add_reader(pidfd, exited)
        try:
            return await done
        finally:
            loop.remove_reader(pidfd)
            os.close(pidfd)


def _pidfds_work() -> bool:
    """Whether this kernel gives pidfds (Linux 5.3+); elsewhere asyncio's watcher waits."""
    if not hasattr(os, "pidfd_open"):
        return False
    try:
        os.close(os.pidfd_open(os.getpid()))
    except OSError:
        return False
    return True


_PIDFDS = _pidfds_work()


def _settle(future: asyncio.Future[int], code: int) -> None:
    if not future.done():
        future.set_result(code)


async def spawn_process(
    sandbox: Sandbox | None, argv: Sequence[str], **kwargs: Any
) -> SpawnedProcess:
    """Start `argv` confined by `sandbox` (None: unconfined); `kwargs` are `Popen`'s.

    Returns an object with `pid` and `async wait() -> returncode`. Raises OSError when the
    process could not be started, including when the sandbox could not be applied. In a
    sandbox the event loop runs on while the sandbox's server starts the process.
    """
    spawner = sandbox.spawner() if sandbox is not None else None
    if spawner is None:
        wrapped = sandbox.wrap(argv) if sandbox is not None else list(argv)
        if _PIDFDS:
            # asyncio's create_subprocess_exec runs this same Popen (a vfork) in the loop.
            return PidfdProcess(subprocess.Popen(wrapped, **kwargs))  # noqa: ASYNC220
        return await asyncio.create_subprocess_exec(*wrapped, **kwargs)
    return ConfinedProcess(await spawner.popen_async(argv, **kwargs))


def popen(sandbox: Sandbox | None, argv: Sequence[str], **kwargs: Any) -> SpawnedPopen:
    """`subprocess.Popen` (blocking), confined by `sandbox` like `spawn_process`."""
    spawner = sandbox.spawner() if sandbox is not None else None
    if spawner is None:
        wrapped = sandbox.wrap(argv) if sandbox is not None else list(argv)
        return subprocess.Popen(wrapped, **kwargs)
    return spawner.popen(argv, **kwargs)
