"""`pct log`: the journal of every tool call, newest first.

One line per call for people; `--json` prints one JSON object per line with the
`CallRecord` fields (plus `undoable`) for scripts. Filters combine. Exit 0; stderr says
when nothing matches and when the journal is off (and why). A bad `--since` is a usage
error (exit 2); a journal that cannot be opened prints why on stderr, exit 1.
"""

from __future__ import annotations

import re
import sqlite3
import sys
import time
from datetime import datetime
from typing import TYPE_CHECKING

from pct_runtime.cli_commands.errors import CliError
from pct_runtime.cli_commands.journal_cli import off_reason, print_notices, say, unreadable
from pct_runtime.journal import Journal, JournalError, JournalQuery
from pct_runtime.journal.settings import agent_dir_from_env
from pct_runtime.journal.store import journal_exists
from pct_runtime.output.terminal_text import visible

if TYPE_CHECKING:
    import argparse

    from pct_runtime.journal import CallRecord

_DURATION = re.compile(r"^(\d+(?:\.\d+)?)\s*([smhdw])$")
_UNIT_SECONDS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800}


def parse_since(text: str, now: float | None = None) -> float:
    """Unix time from `30m`/`2h`/`7d`/`1w`/`45s` (ago) or an ISO date/time. Raises CliError."""
    now = time.time() if now is None else now
    match = _DURATION.match(text.strip().lower())
    if match:
        return now - float(match.group(1)) * _UNIT_SECONDS[match.group(2)]
    try:
        return datetime.fromisoformat(text.strip()).timestamp()
    except (OverflowError, OSError):
        raise CliError(f"--since {text!r} is out of range: give a time after 1970") from None
    except ValueError:
        raise CliError(
            f"--since {text!r} is neither a duration (30m, 2h, 7d, 1w) nor an ISO time "
            "(2026-01-31 or 2026-01-31T14:00)"
        ) from None


def _line(record: CallRecord) -> str:
    when = datetime.fromtimestamp(record.time).strftime("%Y-%m-%d %H:%M:%S")
    outcome: str = record.outcome
    if record.error_code and record.outcome != "ok":
        outcome = f"{record.outcome}({record.error_code})"
    tool = record.tool if record.path == "direct" else f"↳{record.tool}"
    flags = ""
    if record.undoable:
        flags = " [undoable]"
    elif record.undone_by:
        flags = f" [undone by {record.undone_by}]"
    who = visible(record.transport + (f"/{record.client_name}" if record.client_name else ""))
    summary = visible(record.summary.replace("\n", " ⏎ "))
    return (
        f"{when}  {record.call_id}  {tool:<13} {outcome:<24} {record.duration_ms:>8.0f}ms  "
        f"{record.session_id or '-'}  {who}  {summary}{flags}"
    )


def _filtered(args: argparse.Namespace) -> bool:
    return any(
        value is not None
        for value in (args.session, args.tool, args.since, args.outcome, args.text)
    )


def run(args: argparse.Namespace) -> int:
    if args.limit < 1:
        raise CliError("--limit must be at least 1")
    since = parse_since(args.since) if args.since is not None else None
    query = JournalQuery(
        session=args.session,
        tool=args.tool,
        outcome=args.outcome,
        text=args.text,
        since=since,
        limit=args.limit,
    )
    root = agent_dir_from_env()  # not config.paths: that loads the config schema
    reason, unwritable = off_reason(root)
    if reason is not None and not unwritable:
        say(f"the journal is off: {reason}; new calls are not recorded")
    if not journal_exists(root):
        if unwritable:
            say(f"the journal is off: {reason}; nothing was recorded")
        elif reason is None:
            say("no calls recorded yet.")
        return 0  # nothing recorded yet: an empty log
    try:
        with Journal.open(root) as journal:
            records = journal.query(query)
            print_notices(journal)
    except (JournalError, sqlite3.Error) as exc:
        text = unreadable(root, exc) if isinstance(exc, sqlite3.Error) else str(exc)
        if unwritable:
            text = f"the journal is off: {reason}; its rows cannot be read here ({text})"
        say(text)
        return 1
    if unwritable:
        say(f"the journal is off: {reason}; new calls are not recorded")
    if not records:
        say("no calls match" + (" these filters." if _filtered(args) else "."))
    out = sys.stdout
    for record in records:
        out.write((record.to_json() if args.json else _line(record)) + "\n")
    out.flush()
    return 0
