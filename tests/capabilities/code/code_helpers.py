"""Code Mode test helpers: process checks and a scriptable fake adapter."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Mapping
from typing import Any

from pct_runtime.capabilities.apply_patch.tool import create_apply_patch_tool
from pct_runtime.capabilities.base import (
    Approval,
    CallContext,
    Prepared,
    Tool,
    ToolError,
    ToolResult,
    ToolSpec,
)
from pct_runtime.capabilities.shell import ShellManager, create_shell_tools


def nested_tools(shell: ShellManager | None, *, apply_patch: bool = True) -> list[Tool]:
    """The tools a session's cells reach: the shell pair over `shell`, and Apply Patch."""
    tools: list[Tool] = [*create_shell_tools(shell)] if shell is not None else []
    if apply_patch:
        tools.append(create_apply_patch_tool())
    return tools


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
    """A nested tool whose behaviour a test scripts; records what it saw."""

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
        self.spec = ToolSpec(name, name, "test double", {"type": "object"}, sequential=sequential)
        self._result = result
        self.gate = gate
        self._approval = approval
        self.prepared: list[Mapping[str, Any]] = []
        self.executed: list[CallContext] = []
        self.cancelled = 0

    async def prepare(self, args: Mapping[str, Any], ctx: CallContext) -> Prepared:
        if "bad" in args:
            raise ToolError("invalid-arguments", f"{self.name}: bad is not a field")
        self.prepared.append(dict(args))
        asked = Approval("Code Mode: apply patch?", self._approval) if self._approval else None
        return Prepared(dict(args), approval=asked)

    async def execute(self, prepared: Prepared, ctx: CallContext) -> ToolResult:
        self.executed.append(ctx)
        try:
            if self.gate is not None:
                await self.gate.wait()
        except asyncio.CancelledError:
            self.cancelled += 1
            raise
        args: Any = prepared.args
        value = self._result(args) if self._result else {"echo": args}
        return ToolResult(text="ok", details=value)
