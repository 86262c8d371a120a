"""`pct models [TEXT]`: the `PROVIDER/ID` values `--model` accepts, one a line.

The same registry `pct status`, `pct serve` and `pct-tui` resolve `--model` in: Pi's
`models.json` over the built-in catalog. Models whose provider has no credentials are
listed too (marked), since `--model` accepts them.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

from pct_runtime.config.paths import agent_dir
from pct_runtime.host.pi.model_registry import ModelRegistry

if TYPE_CHECKING:
    import argparse


def run(args: argparse.Namespace) -> int:
    registry = ModelRegistry.load(agent_dir())
    for problem in (registry.error, registry.credentials.error):
        if problem:
            print(f"pct: warning: {problem}", file=sys.stderr)
    needle = (args.text or "").lower()
    rows = sorted(
        (f"{m.provider}/{m.id}", registry.has_auth(m))
        for m in registry.all()
        if needle in f"{m.provider}/{m.id}".lower()
    )
    if not rows:
        print(f"pct: no model id contains {args.text!r}.", file=sys.stderr)
        return 1
    for ref, authed in rows:
        print(ref if authed else f"{ref}  (no credentials)")
    return 0
