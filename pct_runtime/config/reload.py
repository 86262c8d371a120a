"""`/pct reload` for the config layer: re-read the file and say what happened."""

from __future__ import annotations

import os

from pct_runtime.config.errors import reload_message
from pct_runtime.config.store import ConfigStore, not_regular_detail


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


def not_regular_message(path: str | os.PathLike[str]) -> str | None:
    """Why a runtime must not start on `path`, when it exists but is not a regular file.

    `pct serve` and the console refuse at start-up rather than serve all-off defaults from
    a FIFO or device the user clearly did not mean as a config. A missing or unreadable
    file is not refused here: the ordinary read reports it.
    """
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return None
    detail = not_regular_detail(mode)
    if detail is None:
        return None
    return (
        f"Pi Codex Toolkit config error: config-read-failed ({detail}): {os.fspath(path)} "
        "must be a regular JSON file; remove or replace it, then start again."
    )
