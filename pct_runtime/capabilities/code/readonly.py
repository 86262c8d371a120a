"""The nested `apply_patch` under `--sandbox read-only`: refused at prepare, before any
approval, with the direct tool's own text (`capabilities.apply_patch.readonly`)."""

from __future__ import annotations

from pct_runtime.capabilities.apply_patch.readonly import refuse_read_only
from pct_runtime.capabilities.base import CallContext, ToolResult
from pct_runtime.capabilities.code.adapters import PreparedCall
from pct_runtime.host.names import APPLY_PATCH_TOOL
from pct_runtime.jsontypes import JSONMapping


class ReadOnlyPatchAdapter:
    """Takes the place of the `apply_patch` adapter in a read-only session's Code Mode."""

    name = APPLY_PATCH_TOOL
    sequential = True

    async def prepare(self, args: JSONMapping, ctx: CallContext) -> PreparedCall:
        raise refuse_read_only()

    async def execute(self, prepared: PreparedCall, ctx: CallContext) -> ToolResult:
        raise refuse_read_only()
