"""Bounded text, capture and recovery files shared by Shell Sessions and Code Mode."""

from pct_runtime.output.capture import (
    DEFAULT_PREFIX_BYTES,
    Capture,
    OutputOwner,
    RecoveryReason,
    RecoveryRecord,
    RecoveryState,
)
from pct_runtime.output.root import capture_root
from pct_runtime.output.text import (
    PREVIEW_LIMIT_BYTES,
    PreviewRead,
    RollingPreview,
    truncate_text,
    utf8_head,
    utf8_tail_start,
)

__all__ = [
    "DEFAULT_PREFIX_BYTES",
    "PREVIEW_LIMIT_BYTES",
    "Capture",
    "OutputOwner",
    "PreviewRead",
    "RecoveryReason",
    "RecoveryRecord",
    "RecoveryState",
    "RollingPreview",
    "capture_root",
    "truncate_text",
    "utf8_head",
    "utf8_tail_start",
]
