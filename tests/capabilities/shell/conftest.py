"""Shell test fixtures: every process a test starts is found and reaped afterwards.

Each test gets a unique marker in the environment the manager captures; after the test, any
process still carrying that marker is a leak — it is killed (whole group) and the test fails.
"""

from __future__ import annotations

import contextlib
import os
import signal
import time
import uuid
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

from pct_runtime.capabilities.shell import ShellManager
from pct_runtime.output import OutputOwner

MARK = "PCT_SHELL_TEST_MARK"


def _marked_pids(mark: str) -> list[int]:
    needle = f"{MARK}={mark}".encode()
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit() or int(name) == os.getpid():
            continue
        try:
            with open(f"/proc/{name}/environ", "rb") as fh:
                env = fh.read()
            with open(f"/proc/{name}/stat", "rb") as fh:
                stat = fh.read()
        except OSError:
            continue
        if needle in env.split(b"\0"):
            state = stat[stat.rfind(b")") + 2 :].split()[0]
            if state not in (b"Z", b"X"):
                found.append(int(name))
    return found


@pytest.fixture(autouse=True)
def no_leftover_processes(monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    mark = uuid.uuid4().hex
    monkeypatch.setenv(MARK, mark)
    yield mark
    leftovers = _marked_pids(mark)
    deadline = time.monotonic() + 2
    while leftovers and time.monotonic() < deadline:  # processes being reaped right now
        time.sleep(0.05)
        leftovers = _marked_pids(mark)
    for pid in leftovers:
        with contextlib.suppress(OSError):
            os.killpg(os.getpgid(pid), signal.SIGKILL)
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)
    assert not leftovers, f"test left processes behind: {leftovers}"


@pytest.fixture
def temp_root(tmp_path: Path) -> Path:
    root = tmp_path / "recovery"
    root.mkdir()
    return root


@pytest.fixture
async def owner(temp_root: Path) -> AsyncIterator[OutputOwner]:
    owner = OutputOwner(root=temp_root)
    yield owner
    await owner.close()


@pytest.fixture
async def manager(owner: OutputOwner, no_leftover_processes: str) -> AsyncIterator[ShellManager]:
    manager = ShellManager(owner, kill_grace=0.5, confirm_window=1.0)
    yield manager
    with contextlib.suppress(Exception):
        await manager.close()
