"""What `--sandbox read-only` changes above the kernel: `apply_patch` is refused outright.

Shell jobs and Code Mode workers are confined by the kernel (`host.sandbox`); `apply_patch`
runs inside pct itself, so under `read-only` it is refused before it reads anything — both
the direct tool and the nested Code Mode call — instead of failing halfway through a patch.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

from pct_runtime.capabilities.base import CallContext, Tool, ToolError, ToolResult, ToolSpec
from pct_runtime.jsontypes import JSONMapping

if TYPE_CHECKING:  # Code Mode loads only when a session builds it
    from pct_runtime.capabilities.code.adapters import PreparedCall

READ_ONLY_PATCH_MESSAGE = (
    "apply_patch is refused: pct runs with --sandbox read-only, which allows no file changes. "
    "Nothing was changed. Do not try to write the file another way; tell the user that this "
    "edit needs pct restarted with --sandbox workspace-write."
)


def _refuse() -> ToolError:
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
        raise _refuse()


class ReadOnlyPatchAdapter:
    """The nested `apply_patch` under `read-only`: refused at prepare, before any approval."""

    name = "apply_patch"
    sequential = True

    async def prepare(self, args: JSONMapping, ctx: CallContext) -> PreparedCall:
        raise _refuse()

    async def execute(self, prepared: PreparedCall, ctx: CallContext) -> ToolResult:
        raise _refuse()
