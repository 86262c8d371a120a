"""The installed version, for `pct --version`, `pct-tui --version` and the MCP server info.

The one place every `--version`, MCP handshake and diagnostics record reads it, so they
never disagree. The metadata is looked up under the distribution's own name (`pct` on PyPI
is an unrelated project); a source tree that was never installed reports `unknown` rather
than a guess.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from functools import cache

#: The distribution on PyPI: `pct` there is an unrelated project, so ours has its own name.
DISTRIBUTION = "pi-codex-toolkit"


@cache
def version() -> str:
    """The installed distribution's version, or `unknown` from a tree never installed."""
    from importlib import metadata  # on use only: `pct apply-patch` starts without it

    try:
        return metadata.version(DISTRIBUTION)
    except metadata.PackageNotFoundError:
        return "unknown"


def version_line(command: str) -> str:
    """What `--version` prints: `pct 0.1.0`."""
    return f"{command} {version()}"


class VersionAction(argparse.Action):
    """`--version`: the line on stdout, exit 0. The version is looked up only when asked."""

    def __init__(self, option_strings: Sequence[str], dest: str, command: str = "pct") -> None:
        super().__init__(
            option_strings,
            dest=argparse.SUPPRESS,
            default=argparse.SUPPRESS,
            nargs=0,
            help="print the version and exit",
        )
        self.command = command

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: str | Sequence[object] | None,
        option_string: str | None = None,
    ) -> None:
        print(version_line(self.command))
        parser.exit()
