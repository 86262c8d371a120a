"""Code Mode fixtures: a manager per test, and a check that no worker process outlives it."""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import AsyncIterator, Callable, Mapping
from pathlib import Path
from typing import Any

import pytest

from pct_runtime.capabilities.base import CallContext, ToolError, ToolResult
from pct_runtime.capabilities.code import CodeManager, PreparedCall
from pct_runtime.output import OutputOwner


def process_alive(pid: int) -> bool:
    """True while `pid` exists and is not a zombie."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            stat = fh.read()
    except OSError:
        return False
    return stat[stat.rfind(b")") + 2 :].split()[0] not in (b"Z", b"X")


def wait_gone(pids: list[int], timeout: float = 5.0) -> list[int]:
    deadline = time.monotonic() + timeout
    alive = [p for p in pids if process_alive(p)]
    while alive and time.monotonic() < deadline:
        time.sleep(0.02)
        alive = [p for p in alive if process_alive(p)]
    return alive


class FakeAdapter:
    """An adapter whose behaviour a test scripts; records what it saw."""

    def __init__(
        self,
        name: str,
        *,
        result: Callable[[Mapping[str, Any]], Any] | None = None,
        gate: asyncio.Event | None = None,
        approval: str | None = None,
        sequential: bool = False,
    ) -> None:
        self.name = name
        self.sequential = sequential
        self._result = result
        self.gate = gate
        self._approval = approval
        self.prepared: list[Mapping[str, Any]] = []
        self.executed: list[CallContext] = []
        self.cancelled = 0

    async def prepare(self, args: Mapping[str, Any], ctx: CallContext) -> PreparedCall:
        if "bad" in args:
            raise ToolError("invalid-arguments", f"{self.name}: bad is not a field")
        self.prepared.append(dict(args))
        return PreparedCall(self.name, dict(args), approval=self._approval)

    async def execute(self, prepared: PreparedCall, ctx: CallContext) -> ToolResult:
        self.executed.append(ctx)
        try:
            if self.gate is not None:
                await self.gate.wait()
        except asyncio.CancelledError:
            self.cancelled += 1
            raise
        value = self._result(prepared.args) if self._result else {"echo": prepared.args}
        return ToolResult(text="ok", details=value)


@pytest.fixture
async def owner(tmp_path: Path) -> AsyncIterator[OutputOwner]:
    out = OutputOwner(temp_root=tmp_path)
    yield out
    await out.close()


@pytest.fixture
def ctx(tmp_path: Path) -> CallContext:
    return CallContext(cwd=tmp_path, session_id="s1", tool_call_id="call-1")


@pytest.fixture
async def make_manager(owner: OutputOwner) -> AsyncIterator[Callable[..., CodeManager]]:
    made: list[CodeManager] = []

    def factory(adapters: Any = (), **kwargs: Any) -> CodeManager:
        manager = CodeManager(owner, list(adapters), **kwargs)
        made.append(manager)
        return manager

    yield factory
    for manager in made:
        zygote = manager.zygote_pid
        await manager.close()
        pids = list(manager.spawned_pids) + ([zygote] if zygote else [])
        leftover = await asyncio.to_thread(wait_gone, pids)
        assert not leftover, f"worker processes left behind: {leftover}"
        assert manager.worker_pids() == []


@pytest.fixture
async def manager(make_manager: Callable[..., CodeManager]) -> CodeManager:
    return make_manager()


def own_pid() -> int:
    return os.getpid()
