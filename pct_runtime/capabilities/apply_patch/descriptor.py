"""Apply Patch's descriptor: the `apply_patch` definition and its session binding."""

from __future__ import annotations

from collections.abc import Sequence

from pct_runtime.capabilities.apply_patch.readonly import ReadOnlyPatchTool
from pct_runtime.capabilities.apply_patch.tool import apply_patch_spec, create_apply_patch_tool
from pct_runtime.capabilities.base import Tool, ToolSpec
from pct_runtime.capabilities.context import CapabilityContext
from pct_runtime.capabilities.descriptor import Descriptor
from pct_runtime.host.pi.names import APPLY_PATCH_TOOL


def _specs() -> Sequence[ToolSpec]:
    return [apply_patch_spec()]


def _bind(context: CapabilityContext) -> Sequence[Tool]:
    tool = create_apply_patch_tool()
    return [ReadOnlyPatchTool(tool) if context.read_only() else tool]


DESCRIPTORS: tuple[Descriptor, ...] = (
    Descriptor("apply_patch", _specs, _bind, starts=(APPLY_PATCH_TOOL,)),
)
