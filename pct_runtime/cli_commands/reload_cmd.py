"""`pct reload`: re-read and validate the configuration file, and report as `/pct reload` does.

Success prints `Pi Codex Toolkit configuration reloaded.` on stdout (exit 0); a failure prints
`Pi Codex Toolkit config error: <code>[ (<detail>)]; using all-off defaults.` on stderr
(exit 1). Unknown top-level keys are warned about on stderr (with the nearest known key)
without failing. The file is never written. When runtimes are running (`pct serve`, the console),
each is asked to reload and its message is printed as `<runtime>: <message>`.
"""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING

from pct_runtime.config.paths import agent_dir, config_path
from pct_runtime.config.reload import reload_file as _reload_file
from pct_runtime.config.typos import file_warnings
from pct_runtime.serve.client.running import reload_running

if TYPE_CHECKING:
    import argparse


def reload_file(path: str | os.PathLike[str]) -> tuple[str, bool]:
    """The reload message for the file at `path` and whether it loaded (see config.reload)."""
    return _reload_file(path)


def run(args: argparse.Namespace) -> int:
    # A typo is kept and ignored by every reader; say so before anyone reloads it.
    for warning in file_warnings(config_path()):
        print(f"pct: warning: {warning}", file=sys.stderr)
    # Running runtimes (pct serve, the console) reload themselves and report; with none
    # running, validate the file here.
    live = reload_running(agent_dir())
    if live is not None:
        return live
    message, ok = reload_file(config_path())
    print(message, file=sys.stdout if ok else sys.stderr)
    return 0 if ok else 1
