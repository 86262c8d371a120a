"""The installed version, for `pct --version`, `pct-tui --version` and the MCP server info.

The distribution's name will change (another project owns `pct` on PyPI), so the metadata
is looked up under each name pct has shipped as, newest first; a source tree that was never
installed falls back to the package's `__version__`.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence

#: Distribution names pct is or was installed under, newest first.
DISTRIBUTION_NAMES: tuple[str, ...] = ("pct",)


def version() -> str:
    from importlib import metadata  # on use only: `pct apply-patch` starts without it

    for name in DISTRIBUTION_NAMES:
        try:
            return metadata.version(name)
        except metadata.PackageNotFoundError:
            continue
    from pct_runtime import __version__

    return __version__


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
