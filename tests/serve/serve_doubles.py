"""Test doubles registered into runtimes: small real tools with observable behaviour."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import Any

from pct_runtime.capabilities.base import CallContext, ImagePart, ToolError, ToolResult, ToolSpec
from pct_runtime.host.ui import Question, UIUnavailableError

_OBJ: dict[str, Any] = {"type": "object", "additionalProperties": False}


class Echo:
    spec = ToolSpec(
        "echo", "Echo", "Echo the text back.", {**_OBJ, "properties": {"text": {"type": "string"}}}
    )

    def __init__(self) -> None:
        self.contexts: list[CallContext] = []

    async def __call__(self, args: Mapping[str, Any], ctx: CallContext) -> ToolResult:
        self.contexts.append(ctx)
        text = args.get("text")
        if not isinstance(text, str):
            raise ToolError("invalid-arguments", "echo requires a string `text`.")
        return ToolResult(text=text, details={"length": len(text)})


class Picture:
    spec = ToolSpec("picture", "Picture", "Return a tiny PNG.", {**_OBJ, "properties": {}})
    PNG = b"\x89PNG\r\n\x1a\nfake"

    async def __call__(self, args: Mapping[str, Any], ctx: CallContext) -> ToolResult:
        return ToolResult(text="one image", images=[ImagePart(self.PNG, "image/png")])


class Boom:
    spec = ToolSpec("boom", "Boom", "Always crashes.", {**_OBJ, "properties": {}})

    async def __call__(self, args: Mapping[str, Any], ctx: CallContext) -> ToolResult:
        raise RuntimeError("kaput")


class Slow:
    """Reports two progress records, then waits until released or cancelled."""

    spec = ToolSpec("slow", "Slow", "Wait until released.", {**_OBJ, "properties": {}})

    def __init__(self) -> None:
        self.started = asyncio.Event()
        self.release = asyncio.Event()
        self.cancelled = asyncio.Event()

    async def __call__(self, args: Mapping[str, Any], ctx: CallContext) -> ToolResult:
        if ctx.progress is not None:
            ctx.progress({"phase": "start", "n": 1})
            ctx.progress({"phase": "middle", "n": 2})
        self.started.set()
        try:
            await self.release.wait()
        except asyncio.CancelledError:
            self.cancelled.set()
            raise
        return ToolResult(text="released")


class Approve:
    """Asks the UI port for approval; maps a missing UI to `approval-unavailable`."""

    spec = ToolSpec("approve", "Approve", "Ask for approval.", {**_OBJ, "properties": {}})

    async def __call__(self, args: Mapping[str, Any], ctx: CallContext) -> ToolResult:
        try:
            ok = await ctx.ui.confirm(
                Question("Allow the test change?", "It changes nothing real.")
            )
        except UIUnavailableError:
            raise ToolError(
                "approval-unavailable", "Approval needs an interactive UI; nothing ran."
            ) from None
        return ToolResult(text="approved" if ok else "denied")


class FakeApplyPatch:
    """Stands in for the apply_patch capability in projection tests (records its contexts)."""

    spec = ToolSpec(
        "apply_patch",
        "Apply Patch",
        "test double",
        {**_OBJ, "properties": {"patch": {"type": "string"}}},
    )

    def __init__(self) -> None:
        self.contexts: list[CallContext] = []

    async def __call__(self, args: Mapping[str, Any], ctx: CallContext) -> ToolResult:
        self.contexts.append(ctx)
        return ToolResult(text="Applied patch:\n- add x", details={"operations": []})


class ConsoleUI:
    """A console stand-in: answers every confirm with `answer` and records the question."""

    def __init__(self, answer: bool) -> None:
        self.answer = answer
        self.asked: list[str] = []

    @property
    def available(self) -> bool:
        return True

    async def confirm(self, question: Question) -> bool:
        self.asked.append(question.title)
        return self.answer

    async def select(self, question: Question) -> str | None:
        return None

    def notify(self, message: str, level: Any = "info") -> None:
        return None
