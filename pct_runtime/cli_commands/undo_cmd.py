"""`pct undo [CALL_ID] [--session ID]`: take back a patch from the journal (issue 19).

Without CALL_ID: the newest patch not undone yet (of `--session` when given; earlier undos
are skipped, so repeating `pct undo` walks back one patch at a time). With CALL_ID: that
call — an undo's id redoes what it undid. Files are restored only if each is still exactly
what the patch left; otherwise nothing changes and the message names the files changed
since (and, when that was the newest, the next older patch to undo instead). A
`--session` the journal does not know is said as such. Success on stdout, exit 0; a
refusal on stderr, exit 1 (as `pct apply-patch`).
"""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING

from pct_runtime.cli_commands.errors import CliError
from pct_runtime.output.terminal_text import visible

if TYPE_CHECKING:
    from pct_runtime.journal import Journal


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


def _next_older(journal: Journal, session: str | None) -> str | None:
    """The call id of the undoable patch before the newest one (which was refused)."""
    from pct_runtime.journal import JournalQuery

    newest = journal.last_undoable(session)
    if newest is None:
        return None
    for record in journal.query(JournalQuery(session=session, before_seq=newest.seq)):
        if record.undoable and record.undo_of is None:
            return record.call_id
    return None


def run(args: argparse.Namespace) -> int:
    from pct_runtime.journal import Journal, JournalError, JournalQuery, undo_patch
    from pct_runtime.journal.settings import agent_dir_from_env, off_reason
    from pct_runtime.journal.store import journal_exists

    for name, value in (("CALL_ID", args.call_id), ("--session", args.session)):
        if value is not None and not value.strip():
            raise CliError(f"{name} is empty: give a call id from `pct log`, or leave it out")
    root = agent_dir_from_env()  # not config.paths: that loads the config schema
    off = off_reason(root)
    if not journal_exists(root):
        why = (
            f"the journal is off: {off}"
            if off is not None
            else "no journal yet (no call was recorded)"
        )
        print(f"pct: nothing to undo: {why}.", file=sys.stderr)
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
            older = None
            if not outcome.ok and args.call_id is None and outcome.changed_since:
                older = _next_older(journal, args.session)
    except JournalError as exc:
        print(f"pct: {exc}", file=sys.stderr)
        return 1
    message = "\n".join(visible(line) for line in outcome.message.split("\n"))  # model's paths
    if outcome.ok:
        print(message)
        return 0
    if older is not None:
        message += f"\nThe next older patch is {older}: run `pct undo {older}` to undo it."
    if off is not None:  # patches made since it went off cannot be undone: say why
        message += f"\nthe journal is off: {off}; patches since then were not recorded."
    print(message, file=sys.stderr)
    return 1
