"""`--sandbox MODE` / `--sandbox-network`, the flags of `pct serve`, `pct status` and `pct-tui`.

They win over `pct.sandbox` in the configuration file; `sandbox_opts.startup_sandbox`
checks the result before a runtime starts.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pct_runtime.host.system.sandbox import SANDBOX_MODES

if TYPE_CHECKING:
    import argparse


def add_sandbox_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--sandbox",
        choices=SANDBOX_MODES,
        metavar="MODE",
        help="confine every shell job and Code Mode worker: read-only, workspace-write "
        "(writes only under the working directory and the temp dir) or danger-full-access "
        "(no sandbox; the default, unless pct.sandbox.mode in the config file says otherwise)",
    )
    parser.add_argument(
        "--sandbox-network",
        action="store_true",
        help="keep outbound network for confined jobs (off by default in read-only and "
        "workspace-write)",
    )
