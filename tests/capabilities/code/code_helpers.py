"""Code Mode test helpers: process checks and a scriptable fake adapter."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Mapping
from typing import Any

from pct_runtime.capabilities.base import CallContext, ToolError, ToolResult
from pct_runtime.capabilities.code import PreparedCall


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
