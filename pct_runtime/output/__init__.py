"""Bounded text, capture and recovery files shared by Shell Sessions and Code Mode."""

from __future__ import annotations

from typing import TYPE_CHECKING

from pct_runtime import lazy

if TYPE_CHECKING:
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

# Names load on first use: a command that needs one helper (`pct log` needs the
# terminal-text filter) does not import the event loop with the capture.
_HOME: dict[str, str] = {
    "DEFAULT_PREFIX_BYTES": "pct_runtime.output.capture",
    "PREVIEW_LIMIT_BYTES": "pct_runtime.output.text",
    "Capture": "pct_runtime.output.capture",
    "OutputOwner": "pct_runtime.output.capture",
    "PreviewRead": "pct_runtime.output.text",
    "RecoveryReason": "pct_runtime.output.capture",
    "RecoveryRecord": "pct_runtime.output.capture",
    "RecoveryState": "pct_runtime.output.capture",
    "RollingPreview": "pct_runtime.output.text",
    "capture_root": "pct_runtime.output.root",
    "truncate_text": "pct_runtime.output.text",
    "utf8_head": "pct_runtime.output.text",
    "utf8_tail_start": "pct_runtime.output.text",
}

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


__getattr__ = lazy.exports(__name__, _HOME)
