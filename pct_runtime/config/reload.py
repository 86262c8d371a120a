"""`/pct reload` for the config layer: re-read the file and say what happened."""

from __future__ import annotations

import os

from pct_runtime.config.errors import reload_message
from pct_runtime.config.store import ConfigStore


def reload_store(store: ConfigStore) -> tuple[str, bool]:
    """Re-read `store`'s file; return the spec's message and whether the read succeeded.

    Nothing is written. On failure the store keeps its last known good configuration, and
    the message says so only when there was one before this read.
    """
    had_valid = store.has_last_known_good
    result = store.read()
    if result.error is None:
        return reload_message(None, had_valid), True
    return reload_message(result.error, had_valid), False


def reload_file(path: str | os.PathLike[str]) -> tuple[str, bool]:
    """Read and validate the file at `path` in a fresh store (no earlier valid read)."""
    return reload_store(ConfigStore(path))
