"""The parser of `pct undo [CALL_ID] [--session ID]` (run by `undo_cmd`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import argparse


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
