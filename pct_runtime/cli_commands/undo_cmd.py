"""`pct undo [CALL_ID] [--session ID]`: take back a patch from the journal (issue 19).

Without CALL_ID: the newest patch not undone yet (of `--session` when given; earlier undos
are skipped, so repeating `pct undo` walks back one patch at a time). With CALL_ID: that
call — an undo's id redoes what it undid. Files are restored only if each is still exactly
what the patch left, in the very folders it wrote in; otherwise nothing changes and the
message names the files changed since (or the folder that is now a link or another one).
Success on stdout, exit 0; a refusal on stderr, exit 1 (as `pct apply-patch`).
"""

from __future__ import annotations

import argparse
import sys

from pct_runtime.cli_commands.errors import CliError
from pct_runtime.output.terminal_text import visible


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = sub.add_parser(
        "undo",
        help="undo a patch recorded in the journal (the last one by default)",
        description="Restore the files a patch changed, if none changed since. Without "
        "CALL_ID: the newest patch not yet undone (of --session when given). `pct log` "
        "shows the call ids and marks the patches that can be undone [undoable].",
    )
    parser.add_argument("call_id", nargs="?", metavar="CALL_ID", help="the call to undo")
    parser.add_argument("--session", metavar="ID", help="the newest patch of this session")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    import sqlite3

    from pct_runtime.cli_commands.journal_cli import off_reason, print_notices, say, unreadable
    from pct_runtime.journal import Journal, JournalError, undo_patch
    from pct_runtime.journal.settings import agent_dir_from_env
    from pct_runtime.journal.store import journal_exists

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
            outcome = undo_patch(journal, args.call_id, session=args.session, transport="cli")
            print_notices(journal)
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
    print(message, file=sys.stderr)
    return 1
