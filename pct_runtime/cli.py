"""`pct`: the command line of the runtime.

`SUBCOMMANDS` lists the subcommands, each with the module that builds its parser and the
module that runs it; `pct <command>` imports only its own two (start-up is most of a short
command's time), and a run module imports what its command needs at its top.
Exit codes and streams are pinned in docs/ARCHITECTURE.md ("Interfaces pinned").
"""

from __future__ import annotations

import gc
import importlib
import os
import sys
from collections.abc import Callable, Sequence
from functools import cache

from pct_runtime.cli_commands.errors import CliError

TYPE_CHECKING = False  # `typing` stays unloaded on `pct apply-patch` (see pct_runtime.tuples)
if TYPE_CHECKING:  # argparse loads only when a parser is built (see `QUICK`)
    import argparse
    from types import ModuleType
    from typing import Any, NoReturn

    Handler = Callable[[argparse.Namespace], int]
    QuickArgs = Callable[[list[str]], argparse.Namespace | None]

__all__ = ["QUICK", "SUBCOMMANDS", "CliError", "build_parser", "entry", "main"]

#: The subcommands, in the order `pct --help` lists them: name -> (the module whose
#: `register(subparsers)` adds its parser, the module whose `run(args)` runs it). The CLI's
#: one lazy-loading point: these modules are imported by name (`importlib`), the parser
#: module when a parser is built (`--help` and a usage error build them all), the run module
#: once the arguments parsed. Nothing else in the CLI defers an import for start-up but what
#: a run module itself reserves for one case (a flag, the journal off), each saying why.
SUBCOMMANDS: dict[str, tuple[str, str]] = {
    "config": ("pct_runtime.cli_commands.args.config_args", "pct_runtime.cli_commands.config_cmd"),
    "status": ("pct_runtime.cli_commands.args.status_args", "pct_runtime.cli_commands.status_cmd"),
    "models": ("pct_runtime.cli_commands.args.models_args", "pct_runtime.cli_commands.models_cmd"),
    "reload": ("pct_runtime.cli_commands.args.reload_args", "pct_runtime.cli_commands.reload_cmd"),
    "serve": ("pct_runtime.cli_commands.args.serve_args", "pct_runtime.cli_commands.serve_cmd"),
    "attach": ("pct_runtime.cli_commands.args.attach_args", "pct_runtime.cli_commands.attach_cmd"),
    "apply-patch": (
        "pct_runtime.cli_commands.args.apply_patch_args",
        "pct_runtime.cli_commands.apply_patch_cmd",
    ),
    "log": ("pct_runtime.cli_commands.args.log_args", "pct_runtime.cli_commands.log_cmd"),
    "undo": ("pct_runtime.cli_commands.args.undo_args", "pct_runtime.cli_commands.undo_cmd"),
}

#: Commands whose run module reads their plain arguments without argparse
#: (`quick_args(words)`): importing it and building even one subcommand's parser (with
#: gettext looking for translations) is ~5 ms of a ~70 ms `pct apply-patch`, and the parser
#: module would be one more import. It returns None for anything else (help, an unknown,
#: abbreviated or repeated option), which argparse then parses: its messages stay its own.
QUICK = frozenset({"apply-patch"})

PARSER, RUN = 0, 1


def _module(command: str, which: int) -> ModuleType:
    """`command`'s parser (`PARSER`) or run (`RUN`) module, from `SUBCOMMANDS`: the one
    place the CLI imports a module by name."""
    return importlib.import_module(SUBCOMMANDS[command][which])


def _columns() -> int:
    """The terminal's width as `shutil.get_terminal_size` finds it (COLUMNS, then stdout)."""
    try:
        return int(os.environ["COLUMNS"])
    except (KeyError, ValueError):
        pass
    try:
        return os.get_terminal_size(sys.__stdout__.fileno()).columns  # type: ignore[union-attr]
    except (AttributeError, ValueError, OSError):
        return 80


@cache
def _parser_class() -> type[argparse.ArgumentParser]:
    """The parser class of `pct` and of each subcommand (subparsers inherit it), made on
    first use so that a command argparse never sees does not import it."""
    import argparse  # noqa: PLC0415 - start-up: `pct apply-patch` parses without it

    class _Formatter(argparse.HelpFormatter):
        """argparse's help formatter, given its width: argparse builds one for every
        argument it adds and, left to itself, imports shutil (and its compression modules)
        to ask."""

        def __init__(
            self,
            prog: str,
            indent_increment: int = 2,
            max_help_position: int = 24,
            width: int | None = None,
        ) -> None:
            super().__init__(prog, indent_increment, max_help_position, width or _columns() - 2)

    class _Parser(argparse.ArgumentParser):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            kwargs.setdefault("formatter_class", _Formatter)
            super().__init__(*args, **kwargs)

    return _Parser


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The parser for every command, or only for `command` when it names a known one."""
    # Start-up: `--version`'s action subclasses argparse's (see `_parser_class`).
    from pct_runtime.version import VersionAction  # noqa: PLC0415

    parser: argparse.ArgumentParser = _parser_class()(
        prog="pct",
        description="Pi Codex Toolkit runtime: Codex-grade tools for coding agents over MCP.",
    )
    parser.add_argument("--version", action=VersionAction, command="pct")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    names = [command] if command in SUBCOMMANDS else list(SUBCOMMANDS)
    for name in names:
        _module(name, PARSER).register(sub)
    _remember_parsers(parser)
    return parser


def _remember_parsers(parser: argparse.ArgumentParser) -> None:
    """Each (sub)command's parser records itself in the namespace, so an unknown flag is
    reported with that subcommand's usage (argparse reports it with the top-level one)."""
    import argparse  # noqa: PLC0415 - loaded by then: see `_parser_class`

    parser.set_defaults(usage_parser=parser)
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for child in action.choices.values():
                _remember_parsers(child)


def parse(parser: argparse.ArgumentParser, argv: Sequence[str] | None) -> argparse.Namespace:
    """`parse_args`, but an unknown argument exits 2 with the usage of the subcommand it
    was given to (`pct status --bogus` shows `usage: pct status ...`)."""
    args, extras = parser.parse_known_args(argv)
    if extras:
        target: argparse.ArgumentParser = getattr(args, "usage_parser", parser)
        target.error(f"unrecognized arguments: {' '.join(extras)}")
    return args


def main(argv: Sequence[str] | None = None) -> int:
    return _run(argv)[0]


def entry() -> NoReturn:
    """The `pct` console script: `main`, then, for a command that asks for it
    (`quick_exit`), the process ends without the interpreter's teardown once its output
    is flushed: freeing every module and object is ~9 ms of a ~70 ms `pct apply-patch`.
    Only commands that leave no thread, atexit work or unflushed file behind ask."""
    code, quick = _run(None)
    if quick:
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        except BrokenPipeError:
            code = 141
        os._exit(code)
    sys.exit(code)


def _parse(words: list[str]) -> argparse.Namespace:
    """The arguments: the command's `quick_args` when it has one and they fit, else argparse
    (which exits 2 on a usage error, 0 after `--help`)."""
    if words and words[0] in QUICK:
        quick: QuickArgs = _module(words[0], RUN).quick_args
        args = quick(words[1:])
        if args is not None:
            return args
    return parse(build_parser(words[0] if words else None), words)


def _run(argv: Sequence[str] | None) -> tuple[int, bool]:
    """(exit code, whether the command allows an exit without teardown).

    A quick command runs with the cyclic collector paused from its first import, as its
    apply already is (`collector_paused`): the objects its modules create live until exit,
    and the collector's passes over them would find no cycle. It is restored for an
    in-process caller."""
    words = list(sys.argv[1:] if argv is None else argv)
    paused = bool(words) and words[0] in QUICK and gc.isenabled()
    if paused:
        gc.disable()
    try:
        return _dispatch(_parse(words))
    finally:
        if paused:
            gc.enable()


def _dispatch(args: argparse.Namespace) -> tuple[int, bool]:
    quick_exit = bool(getattr(args, "quick_exit", False))
    try:
        handler: Handler = _module(args.command, RUN).run
        return handler(args), quick_exit
    except CliError as exc:
        print(f"pct: {exc}", file=sys.stderr)
        return exc.code, quick_exit
    except KeyboardInterrupt:
        return 130, False
    except BrokenPipeError:
        # `pct config show | head`: the reader left; silence the flush at interpreter exit.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 141, False


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
