"""The parser of `pct models [TEXT]` (run by `models_cmd`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import argparse


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = sub.add_parser(
        "models",
        help="list the PROVIDER/ID values --model accepts",
        description="List the models of Pi's registry (models.json and the built-in "
        "catalog) as PROVIDER/ID, sorted; with TEXT, only those containing it. "
        "`(no credentials)` marks a provider with no key in auth.json or the environment.",
    )
    parser.add_argument("text", nargs="?", metavar="TEXT", help="only ids containing TEXT")
