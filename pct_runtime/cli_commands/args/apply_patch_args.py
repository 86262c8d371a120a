"""The parser of `pct apply-patch [--cwd DIR] [FILE]` (run by `apply_patch_cmd`).

Plain arguments skip it: `quick_args` reads them without argparse (with gettext and locale,
~5 ms of a ~70 ms `pct apply-patch`) and makes what this parser makes of them.
"""

from __future__ import annotations

from collections.abc import Sequence
from types import SimpleNamespace
from typing import TYPE_CHECKING, cast

if TYPE_CHECKING:
    import argparse


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = sub.add_parser(
        "apply-patch",
        help="apply a Codex-style patch (*** Begin Patch … *** End Patch)",
        description=(
            "Apply one patch read from FILE (or standard input) to the files under --cwd. "
            "A rejected patch changes nothing."
        ),
    )
    parser.add_argument("--cwd", default=".", help="working directory (default: current)")
    parser.add_argument("file", nargs="?", metavar="FILE", help="patch file (default: stdin)")
    # Nothing is left to run at exit: the journal's row is spooled before `run` returns.
    parser.set_defaults(quick_exit=True)


def quick_args(words: Sequence[str]) -> argparse.Namespace | None:
    """The arguments after `apply-patch` when they are only `--cwd DIR` (or `--cwd=DIR`) and
    FILE (or `-`), each at most once, no value empty or starting with `-`: what `register`'s
    parser would make of them, without argparse. None for anything else, argparse's to parse
    (help, errors and every corner of its syntax stay its own)."""
    cwd: str | None = None
    file: str | None = None
    at = 0
    while at < len(words):
        word = words[at]
        if word == "--cwd" and at + 1 < len(words):
            value: str | None = words[at + 1]
            at += 2
        elif word.startswith("--cwd="):
            value = word[len("--cwd=") :]
            at += 1
        else:
            if file is not None or not word or (word.startswith("-") and word != "-"):
                return None
            file = word
            at += 1
            continue
        if cwd is not None or not value or value.startswith("-"):
            return None
        cwd = value
    found = SimpleNamespace(command="apply-patch", cwd=cwd or ".", file=file, quick_exit=True)
    return cast("argparse.Namespace", found)
