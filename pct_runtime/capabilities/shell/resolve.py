"""Which shell runs commands: the user's `$SHELL`, else `/bin/sh`, both with `-c`.

Resolution is injectable (`ShellManager(resolve_shell=...)`) so an embedder can mirror its
host's shell configuration and tests can simulate a machine without a usable shell.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass


@dataclass(frozen=True)
class ShellConfig:
    """A resolved shell.

    The command runs as `[path, *args, command]`. With `stdin_transport` the command is written
    to the shell's stdin instead and stdin is then closed, so such a session is not interactive.
    """

    path: str
    args: tuple[str, ...] = ("-c",)
    stdin_transport: bool = False


class ShellUnavailableError(Exception):
    """No usable local shell could be resolved."""


def _usable(path: str) -> bool:
    return os.path.isabs(path) and os.path.isfile(path) and os.access(path, os.X_OK)


def find_user_shell(environ: Mapping[str, str] | None = None) -> ShellConfig | None:
    """`$SHELL` when it names an executable absolute path, else `/bin/sh`, else None."""
    env = os.environ if environ is None else environ
    candidate = env.get("SHELL", "")
    if candidate and _usable(candidate):
        return ShellConfig(candidate)
    if _usable("/bin/sh"):
        return ShellConfig("/bin/sh")
    return None


def default_resolver() -> ShellConfig:
    """The default resolution; raises `ShellUnavailableError` when no shell is usable."""
    shell = find_user_shell()
    if shell is None:
        raise ShellUnavailableError("neither $SHELL nor /bin/sh is an executable file")
    return shell
