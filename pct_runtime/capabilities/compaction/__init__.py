"""Remote Compaction v2: checkpoint creation, replay and the embedder hooks."""

from pct_runtime.capabilities.compaction.hook import RemoteCompaction
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
