"""What `--sandbox read-only` changes above the kernel: `apply_patch` is refused outright.

Shell jobs and Code Mode workers are confined by the kernel (`host.system.sandbox`); `apply_patch`
runs inside pct itself, so under `read-only` it is refused before it reads anything — the
direct and the nested call alike, at `prepare`, before any hook or question —
instead of failing halfway through a patch.
"""

from __future__ import annotations

from dataclasses import dataclass

from pct_runtime.capabilities.base import (
    CallContext,
    Prepared,
    Tool,
    ToolError,
    ToolResult,
    ToolSpec,
)
from pct_runtime.jsontypes import JSONMapping

READ_ONLY_PATCH_MESSAGE = (
    "apply_patch is refused: pct runs with --sandbox read-only, which allows no file changes. "
    "Nothing was changed. Do not try to write the file another way; tell the user that this "
    "edit needs pct restarted with --sandbox workspace-write."
)


def refuse_read_only() -> ToolError:
    """The refusal of every `apply_patch` under `read-only` (Code Mode's nested one too)."""
    return ToolError("sandbox-read-only", READ_ONLY_PATCH_MESSAGE)


@dataclass(frozen=True)
class ReadOnlyPatchTool:
    """`apply_patch` under `read-only`: same spec, every call refused at `prepare`."""

    inner: Tool

    @property
    def spec(self) -> ToolSpec:
        return self.inner.spec

    async def prepare(self, args: JSONMapping, ctx: CallContext) -> Prepared:
        raise refuse_read_only()

    async def execute(self, prepared: Prepared, ctx: CallContext) -> ToolResult:
        raise refuse_read_only()

    async def __call__(self, args: JSONMapping, ctx: CallContext) -> ToolResult:
        raise refuse_read_only()
