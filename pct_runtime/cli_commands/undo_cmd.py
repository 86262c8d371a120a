"""`pct undo [CALL_ID] [--session ID]`: take back a patch from the journal.

Without CALL_ID: the newest patch not undone yet (of `--session` when given; earlier undos
are skipped, so repeating `pct undo` walks back one patch at a time). With CALL_ID: that
call — an undo's id redoes what it undid. Files are restored only if each is still exactly
what the patch left, in the very folders it wrote in; otherwise nothing changes and the
message names the files changed since (or the folder that is now a link or another one)
and, when that was the newest, the next older patch to undo instead. A `--session` the
journal does not know is said as such. Success on stdout, exit 0; a refusal on stderr,
exit 1 (as `pct apply-patch`).
"""

from __future__ import annotations

import sqlite3
import sys
from typing import TYPE_CHECKING

from pct_runtime.cli_commands.errors import CliError
from pct_runtime.cli_commands.journal_cli import off_reason, print_notices, say, unreadable
from pct_runtime.journal import Journal, JournalError, JournalQuery, undo_patch
from pct_runtime.journal.settings import agent_dir_from_env
from pct_runtime.journal.store import journal_exists
from pct_runtime.output.terminal_text import visible

if TYPE_CHECKING:
    import argparse


def _next_older(journal: Journal, session: str | None) -> str | None:
    """The call id of the undoable patch before the newest one (which was refused)."""
    newest = journal.last_undoable(session)
    if newest is None:
        return None
    for record in journal.query(JournalQuery(session=session, before_seq=newest.seq)):
        if record.undoable and record.undo_of is None:
            return record.call_id
    return None


def run(args: argparse.Namespace) -> int:
    for name, value in (("CALL_ID", args.call_id), ("--session", args.session)):
        if value is not None and not value.strip():
            raise CliError(f"{name} is empty: give a call id from `pct log`, or leave it out")
    root = agent_dir_from_env()  # not config.paths: that loads the config schema
    reason, unwritable = off_reason(root)
    if unwritable:  # an undo is recorded, and its images kept: nothing changes without it
        say(f"nothing undone: the journal is off: {reason}")
        return 1
    if reason is not None:
        say(f"the journal is off: {reason}; undo still uses the calls recorded before")
    if not journal_exists(root):
        say("nothing to undo: no journal yet (no call was recorded).")
        return 1
    try:
        with Journal.open(root) as journal:
            if args.session is not None and not journal.query(
                JournalQuery(session=args.session, limit=1)
            ):
                print(
                    f"pct: no session {visible(args.session)} in the journal; "
                    "`pct log` shows the session ids.",
                    file=sys.stderr,
                )
                return 1
            outcome = undo_patch(journal, args.call_id, session=args.session, transport="cli")
            print_notices(journal)
            older = None
            if not outcome.ok and args.call_id is None and outcome.changed_since:
                older = _next_older(journal, args.session)
    except JournalError as exc:
        say(str(exc))
        return 1
    except sqlite3.Error as exc:
        say(unreadable(root, exc))
        return 1
    message = "\n".join(visible(line) for line in outcome.message.split("\n"))  # model's paths
    if outcome.ok:
        print(message)
        return 0
    if older is not None:
        message += f"\nThe next older patch is {older}: run `pct undo {older}` to undo it."
    print(message, file=sys.stderr)
    return 1
