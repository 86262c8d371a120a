"""`pct apply-patch [--cwd DIR] [FILE]`: apply one patch from FILE or standard input.

Prints the tool's result text on stdout and exits 0; a rejection prints its exact text on
stderr and exits 1. Only the parser and executor are imported (no event loop, no lark).
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from types import SimpleNamespace

from pct_runtime.capabilities.apply_patch.collector import collector_paused
from pct_runtime.capabilities.apply_patch.errors import ApplyPatchError
from pct_runtime.capabilities.apply_patch.executor import apply_patch_text
from pct_runtime.host.system.workspace_lock import locks_folder

# Strings, not Paths: pathlib (with urllib.parse and ipaddress) would cost ~4 ms.
from pct_runtime.journal.settings import agent_dir_name_from_env, settings_for

TYPE_CHECKING = False  # `typing` stays unloaded on `pct apply-patch` (see pct_runtime.tuples)
if TYPE_CHECKING:  # `quick_args` spares the usual `pct apply-patch` argparse
    import argparse


def quick_args(words: Sequence[str]) -> argparse.Namespace | None:
    """The arguments after `apply-patch` when they are only `--cwd DIR` (or `--cwd=DIR`) and
    FILE (or `-`), each at most once, no value empty or starting with `-`: what its parser
    (`args.apply_patch_args`) makes of them, without argparse. None for anything else,
    argparse's to parse (help, errors and every corner of its syntax stay its own)."""
    cwd: str | None = None
    file: str | None = None
    at = 0
    while at < len(words):
        word = words[at]
        if word == "--cwd" and at + 1 < len(words):
            value: str | None = words[at + 1]
            at += 2
        elif word.startswith("--cwd="):
            value = word[len("--cwd=") :]
            at += 1
        else:
            if file is not None or not word or (word.startswith("-") and word != "-"):
                return None
            file = word
            at += 1
            continue
        if cwd is not None or not value or value.startswith("-"):
            return None
        cwd = value
    found: argparse.Namespace = SimpleNamespace(  # type: ignore[assignment]
        command="apply-patch", cwd=cwd or ".", file=file, quick_exit=True
    )
    return found


class _PatchInputError(Exception):
    """The patch could not be read (distinct from a rejection: no patch was looked at)."""


def _read_patch(file: str | None) -> str:
    try:
        if file is None or file == "-":
            data = sys.stdin.buffer.read()
        else:
            with open(file, "rb") as handle:  # no pathlib: see pct_runtime.tuples
                data = handle.read()
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
    agent_dir = agent_dir_name_from_env()
    settings = settings_for(agent_dir)
    journal = None
    if settings.enabled:
        # Start-up: its writer (spool, capture, redaction) loads only when the journal is on.
        from pct_runtime.journal.oneshot import OneShotTrace  # noqa: PLC0415

        journal = OneShotTrace.start(agent_dir, "apply_patch", {"patch": patch}, settings=settings)
    witness = journal.patch_witness if journal is not None else None
    try:
        result = apply_patch_text(patch, args.cwd, witness=witness, locks=locks_folder(agent_dir))
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
    # Start-up: `pct apply-patch` reads plain words with neither argparse nor its parser.
    import argparse  # noqa: PLC0415

    from pct_runtime.cli_commands.args.apply_patch_args import register  # noqa: PLC0415

    parser = argparse.ArgumentParser(prog="pct apply-patch")
    register(parser.add_subparsers(dest="command"))
    return run(parser.parse_args(["apply-patch", *(sys.argv[1:] if argv is None else argv)]))


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
