"""The parser of `pct log` (run by `log_cmd`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import argparse

OUTCOMES = ("ok", "error", "denied", "cancelled")
DEFAULT_LIMIT = 50


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = sub.add_parser(
        "log",
        help="print the journal of tool calls, newest first",
        description="Print the journal of every tool call pct ran for this agent dir "
        "(all runtimes, across restarts), newest first. Filters combine.",
    )
    parser.add_argument("--session", metavar="ID", help="only calls of this session")
    parser.add_argument(
        "--tool", metavar="NAME", help="only calls of this tool (as `pct log` shows it)"
    )
    parser.add_argument(
        "--since",
        metavar="DURATION|ISO",
        help="only calls since then: 30m, 2h, 7d, 1w, or an ISO time (local unless it has a zone)",
    )
    parser.add_argument("--outcome", choices=OUTCOMES, help="only calls with this outcome")
    parser.add_argument(
        "--text", metavar="TEXT", help="only calls whose summary or result has TEXT"
    )
    parser.add_argument(
        "--limit", type=int, default=DEFAULT_LIMIT, metavar="N", help="at most N calls (default 50)"
    )
    parser.add_argument("--json", action="store_true", help="one JSON object per line")
