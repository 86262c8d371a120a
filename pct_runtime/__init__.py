"""pct_runtime: the Pi Codex Toolkit runtime, importable without any UI (a test enforces it)."""

from __future__ import annotations

TOOLKIT_NAME = "pct"
__version__ = "0.1.0"

__all__ = ["TOOLKIT_NAME", "__version__"]
