"""`pct`: the command line of the runtime.

Each subcommand registers itself in `_COMMANDS`; handlers import their capability lazily so
that short commands (`pct apply-patch`, `pct config path`) start fast.
Exit codes and streams are pinned in docs/ARCHITECTURE.md ("Interfaces pinned").
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Sequence
from functools import cache
from typing import TYPE_CHECKING, Any, NoReturn

from pct_runtime.cli_commands.errors import CliError

if TYPE_CHECKING:  # argparse loads only when a parser is built (see `_QUICK`)
    import argparse

    Handler = Callable[[argparse.Namespace], int]
    Register = Callable[[argparse._SubParsersAction[argparse.ArgumentParser]], None]

__all__ = ["CliError", "build_parser", "entry", "main"]


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
    import argparse

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


def _add_config(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    from pct_runtime.cli_commands import config_cmd

    config_cmd.register(sub)


def _add_reload(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    from pct_runtime.cli_commands import reload_cmd

    reload_cmd.register(sub)


def _add_apply_patch(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    from pct_runtime.cli_commands import apply_patch_cmd

    apply_patch_cmd.register(sub)


def _add_serve(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    from pct_runtime.cli_commands import serve_cmd

    serve_cmd.register(sub)


def _add_attach(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    from pct_runtime.cli_commands import attach_cmd

    attach_cmd.register(sub)


def _add_status(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    from pct_runtime.cli_commands import status_cmd

    status_cmd.register(sub)


def _add_models(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    from pct_runtime.cli_commands import models_cmd

    models_cmd.register(sub)


def _add_journal(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    from pct_runtime.cli_commands import log_cmd, undo_cmd

    log_cmd.register(sub)
    undo_cmd.register(sub)


# Registration functions, in the order `pct --help` lists them.
_COMMANDS: list[Register] = [
    _add_config,
    _add_status,
    _add_models,
    _add_reload,
    _add_serve,
    _add_attach,
    _add_apply_patch,
    _add_journal,
]


# Which registration defines each command, so that `pct <command>` imports only its own module
# (start-up is most of a short command's time). A name missing here registers everything.
_REGISTRAR_OF: dict[str, Register] = {
    "config": _add_config,
    "status": _add_status,
    "reload": _add_reload,
    "serve": _add_serve,
    "attach": _add_attach,
    "apply-patch": _add_apply_patch,
    "log": _add_journal,
    "undo": _add_journal,
}


def _quick_apply_patch(words: list[str]) -> argparse.Namespace | None:
    from pct_runtime.cli_commands import apply_patch_cmd

    return apply_patch_cmd.quick_args(words)


# Commands that read their plain arguments without argparse: importing it and building even
# one subcommand's parser (with gettext looking for translations) is ~5 ms of a ~70 ms
# `pct apply-patch`. They return None for anything else (help, an unknown, abbreviated or
# repeated option), which argparse then parses: its messages stay its own.
_QUICK: dict[str, Callable[[list[str]], argparse.Namespace | None]] = {
    "apply-patch": _quick_apply_patch,
}


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The parser for every command, or only for `command` when it names a known one."""
    parser: argparse.ArgumentParser = _parser_class()(
        prog="pct",
        description="Pi Codex Toolkit runtime: Codex-grade tools for coding agents over MCP.",
    )
    from pct_runtime.version import VersionAction

    parser.add_argument("--version", action=VersionAction, command="pct")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    only = _REGISTRAR_OF.get(command) if command is not None else None
    for register in [only] if only is not None else _COMMANDS:
        register(sub)
    _remember_parsers(parser)
    return parser


def _remember_parsers(parser: argparse.ArgumentParser) -> None:
    """Each (sub)command's parser records itself in the namespace, so an unknown flag is
    reported with that subcommand's usage (argparse reports it with the top-level one)."""
    import argparse

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


def _run(argv: Sequence[str] | None) -> tuple[int, bool]:
    """(exit code, whether the command allows an exit without teardown)."""
    words = list(sys.argv[1:] if argv is None else argv)
    quick = _QUICK.get(words[0]) if words else None
    args = quick(words[1:]) if quick is not None else None
    if args is None:
        args = parse(build_parser(words[0] if words else None), words)
    handler: Handler = args.handler
    quick_exit = bool(getattr(args, "quick_exit", False))
    try:
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
