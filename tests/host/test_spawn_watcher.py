"""Unconfined children are waited for through a pidfd: exit codes and signals arrive, no
thread waits per child, and no fd is left open."""

from __future__ import annotations

import asyncio
import os
import signal
import threading

import pytest

from pct_runtime.host.system.sandbox import spawn
from pct_runtime.host.system.sandbox.spawn import spawn_process

pytestmark = pytest.mark.skipif(not spawn._PIDFDS, reason="this kernel gives no pidfds")


def _open_fds() -> int:
    return len(os.listdir("/proc/self/fd"))


async def test_exit_codes_arrive_and_no_thread_waits_per_child() -> None:
    fds, threads = _open_fds(), threading.active_count()
    procs = [await spawn_process(None, ["sh", "-c", f"sleep 0.2; exit {n}"]) for n in range(5)]
    assert all(isinstance(p, spawn.PidfdProcess) for p in procs)
    assert threading.active_count() == threads  # asyncio's 3.11 watcher starts one each
    assert [await p.wait() for p in procs] == [0, 1, 2, 3, 4]
    assert _open_fds() == fds


async def test_a_signalled_child_reports_the_signal_and_a_gone_child_its_code() -> None:
    proc = await spawn_process(None, ["sleep", "30"])
    os.kill(proc.pid, signal.SIGTERM)
    assert await proc.wait() == -signal.SIGTERM
    quick = await spawn_process(None, ["true"])
    # WNOHANG never blocks; WNOWAIT leaves the exited child unreaped for wait() to find.
    flags = os.WEXITED | os.WNOHANG | os.WNOWAIT
    while os.waitid(os.P_PID, quick.pid, flags) is None:  # noqa: ASYNC110, ASYNC222
        await asyncio.sleep(0.001)
    assert await quick.wait() == 0
    assert await quick.wait() == 0
