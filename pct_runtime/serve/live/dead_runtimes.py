"""Start-up cleanup of what runtimes that died without cleaning up left behind.

A runtime killed with SIGKILL leaves its live-control registry entry
(`<agent dir>/pct/runtimes/<pid>-<id>.json`, plus a `.tmp` if it died while writing one);
if its lifeline watchdog was killed too, also its jobs and capture folders (see
`pct_runtime.host.system.lifeline`). Every runtime that registers for live control sweeps them
first. An entry is stale when its pid is gone, is a zombie, or belongs to a process that
started after the entry was written (the pid was reused); entries it cannot read are left
alone.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
from pathlib import Path

from pct_runtime.host.system.lifeline import kill_orphans
from pct_runtime.host.system.procs import alive_since
from pct_runtime.output.sweep import sweep_stale_output_dirs

_log = logging.getLogger(__name__)


def _entry_owner(path: Path) -> tuple[int, float] | None:
    """(pid, registered-at) of an entry; the pid from its name when the body is unreadable."""
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
        return int(raw["pid"]), float(raw.get("started", 0.0))
    except (OSError, ValueError, KeyError, TypeError):
        pass
    if path.suffix == ".tmp":  # a write that died half way: its name still carries the pid
        head = path.name.split("-", 1)[0]
        if head.isdigit():
            return int(head), path.stat().st_mtime if path.exists() else 0.0
    return None


def sweep_registry(agent_dir: Path) -> list[Path]:
    """Remove registry entries of runtimes that no longer run. Returns the removed paths."""
    directory = agent_dir / "pct" / "runtimes"
    removed: list[Path] = []
    try:
        paths = sorted(p for p in directory.iterdir() if p.suffix in (".json", ".tmp"))
    except OSError:
        return removed
    for path in paths:
        owner = _entry_owner(path)
        if owner is None or owner[0] == os.getpid():
            continue
        pid, registered = owner
        if alive_since(pid, registered):
            continue
        with contextlib.suppress(OSError):
            path.unlink()
            removed.append(path)
    return removed


def sweep_stale_state(agent_dir: Path) -> None:
    """Orphaned jobs, registry entries and capture folders of dead runtimes (never raises)."""
    try:
        orphans = kill_orphans()
        entries = sweep_registry(agent_dir)
        folders = sweep_stale_output_dirs()
    except Exception:
        _log.warning("start-up sweep of stale runtime state failed", exc_info=True)
        return
    if orphans or entries or folders:
        _log.info(
            "stopped %d orphaned processes, removed %d stale registry entries and %d capture "
            "folders",
            len(orphans),
            len(entries),
            len(folders),
        )
