"""Where the configuration lives: `<agent dir>/extensions/pi-codex-toolkit.json`.

The agent dir is resolved the way Pi resolves it, so that pct and Pi share one file:
`PI_CODING_AGENT_DIR` (a leading `~` or `~/` is expanded) or else `~/.pi/agent`.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

AGENT_DIR_ENV = "PI_CODING_AGENT_DIR"
CONFIG_FILE_NAME = "pi-codex-toolkit.json"


def _expand_home(value: str) -> str:
    # Only `~` and `~/...`, as Pi does; `~user` is left literal.
    if value == "~":
        return str(Path.home())
    if value.startswith("~/"):
        return str(Path.home() / value[2:])
    return value


def agent_dir(env: Mapping[str, str] | None = None) -> Path:
    """Pi's agent directory (an empty variable counts as unset)."""
    environ = os.environ if env is None else env
    configured = environ.get(AGENT_DIR_ENV, "")
    if configured:
        return Path(_expand_home(configured))
    return Path.home() / ".pi" / "agent"


def config_path(env: Mapping[str, str] | None = None) -> Path:
    """The one global configuration file (no project overrides, no layering)."""
    return agent_dir(env) / "extensions" / CONFIG_FILE_NAME
