"""Cheap local facts about the host machine used by decisions (no processes started)."""

from __future__ import annotations

import os
import shutil
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
        comspec = environ.get("COMSPEC")
        return bool(comspec and os.path.exists(comspec)) or shutil.which("cmd") is not None
    shell = environ.get("SHELL", "")
    return any(_usable_shell(path) for path in (shell, fallback) if path)


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
