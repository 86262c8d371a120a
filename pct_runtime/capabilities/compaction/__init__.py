"""Remote Compaction v2: checkpoint creation, replay and the embedder hooks."""

from __future__ import annotations

from typing import TYPE_CHECKING

from pct_runtime import lazy

if TYPE_CHECKING:
    from pct_runtime.capabilities.compaction.hook import (
        RemoteCompaction,
    )
    from pct_runtime.capabilities.compaction.remote import (
        FALLBACK_LIMIT,
        KIND,
        MARKER_PREFIX,
        RETAINED_LIMIT,
        CompactionPreparation,
        CompactionResult,
        Compatibility,
        PriorCompaction,
        RemoteCompactionError,
        build_summary,
        compatibility_for,
        create_checkpoint,
        parse_details,
        replay_checkpoint,
        select_retained_input,
    )

# Names load on first use: `pct status` imports this package for its declaration
# (`declaration.py`), which needs none of them.
_HOME: dict[str, str] = {
    "CompactionPreparation": "pct_runtime.capabilities.compaction.remote",
    "CompactionResult": "pct_runtime.capabilities.compaction.remote",
    "Compatibility": "pct_runtime.capabilities.compaction.remote",
    "FALLBACK_LIMIT": "pct_runtime.capabilities.compaction.remote",
    "KIND": "pct_runtime.capabilities.compaction.remote",
    "MARKER_PREFIX": "pct_runtime.capabilities.compaction.remote",
    "PriorCompaction": "pct_runtime.capabilities.compaction.remote",
    "RETAINED_LIMIT": "pct_runtime.capabilities.compaction.remote",
    "RemoteCompaction": "pct_runtime.capabilities.compaction.hook",
    "RemoteCompactionError": "pct_runtime.capabilities.compaction.remote",
    "build_summary": "pct_runtime.capabilities.compaction.remote",
    "compatibility_for": "pct_runtime.capabilities.compaction.remote",
    "create_checkpoint": "pct_runtime.capabilities.compaction.remote",
    "parse_details": "pct_runtime.capabilities.compaction.remote",
    "replay_checkpoint": "pct_runtime.capabilities.compaction.remote",
    "select_retained_input": "pct_runtime.capabilities.compaction.remote",
}

__all__ = [
    "FALLBACK_LIMIT",
    "KIND",
    "MARKER_PREFIX",
    "RETAINED_LIMIT",
    "CompactionPreparation",
    "CompactionResult",
    "Compatibility",
    "PriorCompaction",
    "RemoteCompaction",
    "RemoteCompactionError",
    "build_summary",
    "compatibility_for",
    "create_checkpoint",
    "parse_details",
    "replay_checkpoint",
    "select_retained_input",
]


__getattr__ = lazy.exports(__name__, _HOME)
