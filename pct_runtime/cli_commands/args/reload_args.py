"""The parser of `pct reload` (run by `reload_cmd`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import argparse


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    sub.add_parser(
        "reload",
        help="re-read and validate the configuration file",
        description="Make every running pct runtime (pct serve, the console) re-read "
        "pi-codex-toolkit.json and print its message; with none running, validate the file. "
        "Exit 1 (messages on stderr) when the file is invalid. Nothing is written.",
    )
