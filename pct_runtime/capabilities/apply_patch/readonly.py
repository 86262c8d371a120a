"""What `--sandbox read-only` changes above the kernel: `apply_patch` is refused outright.

Shell jobs and Code Mode workers are confined by the kernel (`host.sandbox`); `apply_patch`
runs inside pct itself, so under `read-only` it is refused before it reads anything — the
direct tool here, the nested Code Mode call by its own adapter with this refusal —
instead of failing halfway through a patch.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from pct_runtime.capabilities.base import CallContext, Tool, ToolError, ToolResult, ToolSpec
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
    """The direct `apply_patch` under `read-only`: same spec, every call refused."""

    runs_invocation_hooks: ClassVar[bool] = True  # refused before any hook, like nested
    inner: Tool

    @property
    def spec(self) -> ToolSpec:
        return self.inner.spec

    async def __call__(self, args: JSONMapping, ctx: CallContext) -> ToolResult:
        raise refuse_read_only()
