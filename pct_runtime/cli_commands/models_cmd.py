"""`pct models [TEXT]`: the `PROVIDER/ID` values `--model` accepts, one a line.

The same registry `pct status`, `pct serve` and `pct-tui` resolve `--model` in: Pi's
`models.json` over the built-in catalog. Models whose provider has no credentials are
listed too (marked), since `--model` accepts them.
"""

from __future__ import annotations

import argparse
import sys


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = sub.add_parser(
        "models",
        help="list the PROVIDER/ID values --model accepts",
        description="List the models of Pi's registry (models.json and the built-in "
        "catalog) as PROVIDER/ID, sorted; with TEXT, only those containing it. "
        "`(no credentials)` marks a provider with no key in auth.json or the environment.",
    )
    parser.add_argument("text", nargs="?", metavar="TEXT", help="only ids containing TEXT")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from pct_runtime.config.paths import agent_dir
    from pct_runtime.host.pi.model_registry import ModelRegistry

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
