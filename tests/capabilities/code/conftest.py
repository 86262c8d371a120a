"""Code Mode fixtures: a manager per test, and a check that no worker process outlives it."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest
from code_helpers import wait_gone

from pct_runtime.capabilities.base import CallContext
from pct_runtime.capabilities.code import CodeManager
from pct_runtime.invocation import InvocationHooks
from pct_runtime.output import OutputOwner
from pct_runtime.runtime.calls import CallPipeline


@pytest.fixture
async def owner(tmp_path: Path) -> AsyncIterator[OutputOwner]:
    out = OutputOwner(root=tmp_path)
    yield out
    await out.close()


@pytest.fixture
def ctx(tmp_path: Path) -> CallContext:
    return CallContext(cwd=tmp_path, session_id="s1", tool_call_id="call-1")


@pytest.fixture
async def make_manager(owner: OutputOwner) -> AsyncIterator[Callable[..., CodeManager]]:
    made: list[CodeManager] = []

    def factory(
        tools: Any = (), hooks: InvocationHooks | None = None, **kwargs: Any
    ) -> CodeManager:
        # The runtime's pipeline over just these tools: what a session's cells reach.
        calls = CallPipeline({tool.spec.name: tool for tool in tools}, hooks=hooks)
        manager = CodeManager(owner, calls, **kwargs)
        made.append(manager)
        return manager

    yield factory
    for manager in made:
        before = set(manager.worker_pids())  # zygote, live cells and idle spares
        await manager.close()
        pids = sorted(before | set(manager.spawned_pids))
        leftover = await asyncio.to_thread(wait_gone, pids)
        assert not leftover, f"worker processes left behind: {leftover}"
        assert manager.worker_pids() == []


@pytest.fixture
async def manager(make_manager: Callable[..., CodeManager]) -> CodeManager:
    return make_manager()
