"""Cheap local facts about the host machine used by decisions (no processes started)."""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Mapping


def current_platform() -> str:
    """`darwin`, `linux`, `win32`, … (Python's `sys.platform`, same spelling as Node's)."""
    return sys.platform


def shell_available(env: Mapping[str, str] | None = None) -> bool:
    """Whether a local shell resolves: `$SHELL` if executable, else `sh`/`bash` on PATH.

    Windows resolves `%COMSPEC%`. Failing this is Shell Sessions' `shell-unavailable`.
    """
    environ = os.environ if env is None else env
    if sys.platform == "win32":
        comspec = environ.get("COMSPEC")
        return bool(comspec and os.path.exists(comspec)) or shutil.which("cmd") is not None
    shell = environ.get("SHELL")
    if shell and os.path.isfile(shell) and os.access(shell, os.X_OK):
        return True
    path = environ.get("PATH")
    return any(shutil.which(name, path=path) is not None for name in ("bash", "sh"))
