"""Where the interoperability tests find the real Node peers (Codex CLI, Claude Code, Inspector).

`.ci/run` installs them into the repository's `node_modules`; a developer may point
`PCT_NODE_BIN` at another `node_modules/.bin`, or have them on PATH. Tests that need one skip
with a reason naming these places when it is missing.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
WHERE = "$PCT_NODE_BIN, <repo>/node_modules/.bin (installed by .ci/run) or PATH"


def node_bin(name: str) -> str | None:
    """The executable `name`, or None when no candidate exists."""
    dirs = [os.environ.get("PCT_NODE_BIN"), str(REPO / "node_modules" / ".bin")]
    for directory in dirs:
        if directory:
            candidate = Path(directory) / name
            if candidate.exists() and os.access(candidate, os.X_OK):
                return str(candidate)
    return shutil.which(name)
