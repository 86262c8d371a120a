"""Types shared by the `pct` entry point and its subcommands.

They live below both so that a subcommand never imports the entry point (no import circle).
"""

from __future__ import annotations


class CliError(Exception):
    """A usage or input error: message to stderr, exit status `code` (default 2)."""

    def __init__(self, message: str, code: int = 2):
        super().__init__(message)
        self.code = code
