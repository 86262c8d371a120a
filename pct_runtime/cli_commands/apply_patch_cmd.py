"""`pct apply-patch [--cwd DIR] [FILE]`: apply one patch from FILE or standard input.

Prints the tool's result text on stdout and exits 0; a rejection prints its exact text on
stderr and exits 1. Only the parser and executor are imported (no event loop, no lark).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING

from pct_runtime.capabilities.apply_patch.collector import collector_paused
from pct_runtime.capabilities.apply_patch.errors import ApplyPatchError
from pct_runtime.capabilities.apply_patch.executor import apply_patch_text
from pct_runtime.cli_commands.args.apply_patch_args import register
from pct_runtime.host.system.workspace_lock import locks_dir
from pct_runtime.journal.settings import agent_dir_from_env, settings_for

if TYPE_CHECKING:  # `args.apply_patch_args.quick_args` spares it the usual argparse
    import argparse


class _PatchInputError(Exception):
    """The patch could not be read (distinct from a rejection: no patch was looked at)."""


def _read_patch(file: str | None) -> str:
    try:
        data = sys.stdin.buffer.read() if file in (None, "-") else Path(file).read_bytes()
    except OSError as exc:
        raise _PatchInputError(f"cannot read patch file {file}: {exc.strerror or exc}") from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise _PatchInputError("the patch is not valid UTF-8") from None


def run(args: argparse.Namespace) -> int:
    # The journal's row is built right after the apply, while the patch's objects are still
    # alive: with the collector back on, its passes would walk them all (a few ms) only to
    # find no cycle. Everything dies by reference counting or at exit.
    with collector_paused():
        return _run(args)


def _run(args: argparse.Namespace) -> int:
    try:
        patch = _read_patch(args.file)
    except _PatchInputError as exc:
        sys.stderr.write(f"pct: {exc}\n")
        return 1
    # The journal (transport "cli"): the patch's pre-images make `pct undo` work for it too.
    agent_dir = agent_dir_from_env()
    settings = settings_for(agent_dir)
    journal = None
    if settings.enabled:
        # Start-up: its writer (spool, capture, redaction) loads only when the journal is on.
        from pct_runtime.journal.oneshot import OneShotTrace  # noqa: PLC0415

        journal = OneShotTrace.start(agent_dir, "apply_patch", {"patch": patch}, settings=settings)
    witness = journal.patch_witness if journal is not None else None
    try:
        result = apply_patch_text(patch, args.cwd, witness=witness, locks=locks_dir(agent_dir))
    except ApplyPatchError as exc:
        if journal is not None:
            journal.finish(outcome="error", error_code=exc.code, text=exc.message)
        sys.stderr.write(exc.message + "\n")
        return 1
    if journal is not None:
        journal.finish(outcome="ok", text=result.text)
    sys.stdout.write(result.text + "\n")
    return 0


def main(argv: list[str] | None = None) -> int:
    """Run only this subcommand (`python -m pct_runtime.cli_commands.apply_patch_cmd`)."""
    import argparse  # noqa: PLC0415 - start-up: `pct apply-patch` reads its words without it

    parser = argparse.ArgumentParser(prog="pct apply-patch")
    register(parser.add_subparsers(dest="command"))
    return run(parser.parse_args(["apply-patch", *(sys.argv[1:] if argv is None else argv)]))


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
