"""What `pct log` and `pct undo` share: why the journal is off, its spool notices, and
one line (never a traceback) for a journal SQLite cannot read."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING

from pct_runtime.journal.schema import damaged, is_damaged
from pct_runtime.journal.settings import config_file, settings_for, state_problem
from pct_runtime.journal.store import db_path

if TYPE_CHECKING:
    import sqlite3

    from pct_runtime.journal import Journal


def off_reason(root: Path) -> tuple[str | None, bool]:
    """(why the journal is off or None, whether that keeps it from being written)."""
    problem = state_problem(root, create=False)
    if problem is not None:
        return problem, True
    settings = settings_for(root)
    if not settings.enabled:
        why = settings.off_reason or "pct.journal.enabled is false"
        return f"{why} in {config_file(root)}", False
    return None, False


def say(message: str) -> None:
    print(f"pct: {message}", file=sys.stderr)


def print_notices(journal: Journal) -> None:
    """Spool rows quarantined on this open (said once: they are moved away)."""
    for notice in journal.take_notices():
        say(notice)


def unreadable(root: Path, exc: sqlite3.Error) -> str:
    path = db_path(root)
    if is_damaged(exc):
        return str(damaged(path, exc))
    return f"the journal {path} cannot be read ({exc}); try again, or move it aside"
