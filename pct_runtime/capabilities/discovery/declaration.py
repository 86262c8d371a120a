"""Tool Discovery's declaration: its row of the capability list (`capabilities/table.py`).

Cheap to import (`pct status` reads it): the decision layer's primitives and the tool's
name, never the catalog. Its config section is `config/sections.py`'s
`ToolDiscoveryConfig`, whose settings (on, and the names it defers) every planning pass
reads through this row's `deferral`.
"""

from __future__ import annotations

from pct_runtime.config import ToolkitConfig
from pct_runtime.decide.context import ActiveList, PlanContext
from pct_runtime.decide.decisions import Decision, decide_tool_discovery
from pct_runtime.decide.rows import CapabilityRow, Deferral, MenuEntry, NoTools
from pct_runtime.host.pi import names


def deferral(config: ToolkitConfig) -> Deferral:
    return Deferral(config.tool_discovery.enabled, config.tool_discovery.deferred)


class _Discovery(NoTools):
    """`find_tools` itself: on with the feature; counts only while its loader is ours."""

    tools = (names.FIND_TOOLS_TOOL,)

    def activate(self, ctx: PlanContext, base: Decision | None, desired: ActiveList) -> None:
        enabled = ctx.config.tool_discovery.enabled
        ctx.activate(desired, self.tools, lambda name: enabled)

    def final(self, ctx: PlanContext, base: Decision | None) -> Decision:
        return decide_tool_discovery(
            ctx.config.tool_discovery.enabled,
            ctx.any_unavailable(self.tools),
            len(ctx.managed),
            len(ctx.loaded),
        )


def _deferred_value(config: ToolkitConfig) -> str:
    return f"{len(config.tool_discovery.deferred)} of {len(names.DEFERRABLE_TOOL_NAMES)}"


_MENU = (
    MenuEntry("tool_discovery", "Tool Discovery", "Tool Discovery on/off."),
    MenuEntry(
        "deferred",
        "Deferred tools",
        "Which Toolkit tools stay hidden until find_tools loads them (Computer Use: all six "
        "or none).",
        "pick",
        value=_deferred_value,
    ),
)

DISCOVERY_NOTE = (
    "  only explicitly managed Toolkit-owned tools can be loaded; discovery never enables "
    "a disabled capability or grants permission."
)


def _status_lines(d: Decision, no_model: bool) -> list[str]:
    """The lines of its `pct status` block after `configured`/`effective`."""
    return [
        f"  reason: {d.reason}",
        f"  managed deferred tools: {d.managed or 0}",
        f"  loaded this session: {d.loaded or 0}",
        DISCOVERY_NOTE,
    ]


ROW = CapabilityRow(
    "tool_discovery",
    "Tool Discovery",
    _status_lines,
    (names.FIND_TOOLS_TOOL,),
    "Tool discovery is not enabled.",
    planner=_Discovery(),
    menu=_MENU,
    binding="pct_runtime.capabilities.discovery.descriptor",
    deferral=deferral,
)
