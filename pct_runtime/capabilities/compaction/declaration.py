"""Remote Compaction's declaration: its row of the capability list (`capabilities/table.py`).

Cheap to import (`pct status` reads it). A hook, no tools: its decision is its row, and it
has no binding of its own (the OpenAI factory carries its payload hooks on Web Search's
descriptor). Its config section is `config/sections.py`'s `RemoteCompactionConfig`.
"""

from __future__ import annotations

from pct_runtime.decide.context import PlanContext
from pct_runtime.decide.decisions import Decision, decide_remote_compaction
from pct_runtime.decide.rows import CapabilityRow, MenuEntry, NoTools, given


class _Compaction(NoTools):
    """A hook, no tools: its decision is its row."""

    def base(self, ctx: PlanContext) -> Decision:
        return decide_remote_compaction(
            ctx.config.remote_compaction.enabled,
            ctx.model,
            ctx.inputs.registry,
            ctx.inputs.session_kind,
        )

    def final(self, ctx: PlanContext, base: Decision | None) -> Decision:
        return given(base)


REMOTE_NOTE = (
    "  active is structural only; refreshed OAuth account compatibility is checked per attempt."
)


def _status_lines(d: Decision, no_model: bool) -> list[str]:
    """The lines of its `pct status` block after `configured`/`effective`."""
    return [f"  reason: {d.reason}", REMOTE_NOTE]


ROW = CapabilityRow(
    "remote_compaction",
    "Remote Compaction",
    _status_lines,
    planner=_Compaction(),
    menu=(MenuEntry("remote_compaction", "Remote Compaction", "Remote Compaction on/off."),),
)
