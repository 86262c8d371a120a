"""Cheap local facts about the host machine used by decisions (no processes started)."""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping


def current_platform() -> str:
    """`darwin`, `linux`, `win32`, … (Python's `sys.platform`, same spelling as Node's)."""
    return sys.platform


#: The shell Shell Sessions falls back to when `$SHELL` is unusable.
FALLBACK_SHELL = "/bin/sh"


def _usable_shell(path: str) -> bool:
    return os.path.isabs(path) and os.path.isfile(path) and os.access(path, os.X_OK)


def shell_available(env: Mapping[str, str] | None = None, fallback: str = FALLBACK_SHELL) -> bool:
    """Whether a local shell resolves, by the executor's own rule
    (`capabilities/shell/resolve.find_user_shell`): `$SHELL` when it is an executable
    absolute path, else `/bin/sh`. PATH plays no part, so status never reports
    `shell-unavailable` while `exec_command` would run, or the reverse.

    Windows resolves `%COMSPEC%`. Failing this is Shell Sessions' `shell-unavailable`.
    """
    environ = os.environ if env is None else env
    if sys.platform == "win32":
        import shutil  # deferred: Windows only (shutil loads bz2 and lzma)

        comspec = environ.get("COMSPEC")
        return bool(comspec and os.path.exists(comspec)) or shutil.which("cmd") is not None
    shell = environ.get("SHELL", "")
    return any(_usable_shell(path) for path in (shell, fallback) if path)
