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


CHATGPT_RESOURCES = "/Applications/ChatGPT.app/Contents/Resources"
#: The paired ChatGPT.app components Computer Use requires (fixed; no PATH search).
CHATGPT_COMPONENTS: tuple[str, ...] = (
    "codex",
    "cua_node/bin/node_repl",
    "cua_node/bin/node",
    "cua_node/lib/node_modules",
)


def computer_use_helper_path(env: Mapping[str, str] | None = None) -> str:
    """`<real CODEX_HOME or ~/.codex>/computer-use/Codex Computer Use.app`."""
    environ = os.environ if env is None else env
    home = environ.get("CODEX_HOME") or os.path.join(os.path.expanduser("~"), ".codex")
    return os.path.join(os.path.realpath(home), "computer-use", "Codex Computer Use.app")


def computer_use_static_reason(
    env: Mapping[str, str] | None = None, resources: str = CHATGPT_RESOURCES
) -> str | None:
    """The cheap file checks of the Computer Use chain (no process is started).

    `missing-chatgpt-desktop-component` / `missing-computer-use-helper`, else None. The
    `node_repl` start and `@oai/sky` target probe belong to the Computer Use capability.
    """
    if not all(os.path.exists(os.path.join(resources, part)) for part in CHATGPT_COMPONENTS):
        return "missing-chatgpt-desktop-component"
    if not os.path.isdir(computer_use_helper_path(env)):
        return "missing-computer-use-helper"
    return None
