"""The parser of `pct apply-patch [--cwd DIR] [FILE]` (run by `apply_patch_cmd`).

Plain arguments skip it: `apply_patch_cmd.quick_args` reads them without argparse and must
make what this parser makes of them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

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
