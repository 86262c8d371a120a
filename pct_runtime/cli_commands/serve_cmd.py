"""`pct serve [--model P/ID] [--tools A,B] [--http [HOST:]PORT] [--structured-content]
[--sandbox MODE] [--sandbox-network]`: serve MCP."""

from __future__ import annotations

import argparse
import logging
import sys
from collections.abc import Coroutine
from pathlib import Path

from pct_runtime.cli_commands.errors import CliError
from pct_runtime.serve.startup import paused_during_startup


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = sub.add_parser(
        "serve",
        help="serve pct's tools over MCP (stdio by default, or streamable HTTP)",
        description=(
            "Run a headless pct runtime and serve it over MCP: stdio by default, or streamable "
            "HTTP at /mcp with --http (loopback unless HOST is given; bearer token from PCT_TOKEN "
            "or <agent dir>/pct/token, created on first use)."
        ),
    )
    parser.add_argument(
        "--model", metavar="PROVIDER/ID", help="the session model (default: Pi settings.json)"
    )
    parser.add_argument(
        "--tools", metavar="A,B", help="host allowlist: only these tool names may be exposed"
    )
    parser.add_argument(
        "--http", metavar="[HOST:]PORT", help="serve streamable HTTP instead of stdio"
    )
    parser.add_argument(
        "--structured-content",
        action="store_true",
        help=(
            "also send each result's details as MCP structuredContent, for programs that read "
            "it (default: off; details are always in _meta['pct/details']). Codex CLI and "
            "Claude Code then show the model that JSON instead of the result text"
        ),
    )
    from pct_runtime.cli_commands.sandbox_opts import add_sandbox_arguments

    add_sandbox_arguments(parser)
    parser.set_defaults(handler=handle)


def parse_allowlist(text: str | None) -> list[str] | None:
    if text is None:
        return None
    return [name.strip() for name in text.split(",") if name.strip()]


def _defer_model_builds() -> None:
    """Build pydantic validators on first use instead of at import.

    The MCP SDK defines ~560 pydantic models; building all of them at import is most of
    `pct serve`'s start-up, and a server uses a few dozen. Deferring is pydantic's own
    `defer_build` behaviour, switched on process-wide for this command only; if a future
    pydantic moves the defaults, start-up is merely slower.
    """
    try:
        from pydantic._internal import _config

        defaults = _config.config_defaults
        if isinstance(defaults, dict) and "defer_build" in defaults:
            defaults["defer_build"] = True
    except (ImportError, AttributeError):  # pragma: no cover - a pydantic without it
        pass


#: Said once when stdio MCP is started by hand: the terminal then looks hung.
STDIO_TERMINAL_NOTE = (
    "pct: serving MCP over stdio: this waits for an MCP client's JSON-RPC on stdin. "
    "Let the agent start it (`pct attach codex|claude|pi` prints the setup), or use "
    "`pct serve --http PORT`; Ctrl-C quits."
)


def _is_terminal(stream: object) -> bool:
    isatty = getattr(stream, "isatty", None)
    try:
        return bool(isatty()) if callable(isatty) else False
    except ValueError:  # a closed stream
        return False


def pct_section_refusal(path: Path) -> str | None:
    """Why a runtime must not start on `path`'s `pct` section, or None.

    pct's own settings (sandbox, journal, ...) decide what a served agent may do and what
    is recorded; serving on a value pct cannot use would leave the agent without tools or
    history and nobody told. The spec's own fields fall back as the spec says instead.
    """
    from pct_runtime.config.pct_section import pct_section_error
    from pct_runtime.config.store import read_document

    problem = pct_section_error(read_document(path) or {})
    if problem is None:
        return None
    return (
        f"Pi Codex Toolkit config error: invalid-config ({problem}) in {path}; "
        "fix the field, then start again."
    )


@paused_during_startup
def handle(args: argparse.Namespace) -> int:

    _defer_model_builds()

    logging.basicConfig(
        level=logging.WARNING, stream=sys.stderr, format="pct: %(levelname)s %(name)s: %(message)s"
    )
    model: str | None = args.model
    from pct_runtime.cli_commands.host_checks import load_host_model, warn_unknown_tools
    from pct_runtime.config.paths import agent_dir, config_path
    from pct_runtime.config.reload import not_regular_message

    refused = not_regular_message(config_path())
    if refused is not None:
        raise CliError(refused, code=1)
    # Pi's files are checked (and their problems said) before serving: a served session
    # has no other place to report that custom providers or the default model are gone.
    load_host_model(agent_dir(), model, Path.cwd())
    allowlist = parse_allowlist(args.tools)
    warn_unknown_tools(allowlist)
    from pct_runtime.cli_commands.sandbox_opts import SandboxStartError, startup_sandbox
    from pct_runtime.config.paths import config_path

    try:
        sandbox, warning = startup_sandbox(args.sandbox, args.sandbox_network, config_path())
    except SandboxStartError as exc:
        raise CliError(str(exc), code=1) from None
    if warning:
        print(warning, file=sys.stderr, flush=True)
    refused = pct_section_refusal(config_path())
    if refused is not None:
        raise CliError(refused, code=1)
    from pct_runtime.serve import run

    structured: bool = args.structured_content
    coro: Coroutine[object, object, int]
    if args.http is not None:
        from pct_runtime.serve.mcp.http import parse_listen

        try:
            host, port = parse_listen(args.http)
        except ValueError as exc:
            raise CliError(f"--http: {exc}") from None
        coro = run.serve_http(
            host,
            port,
            model=model,
            allowlist=allowlist,
            structured_content=structured,
            sandbox=sandbox,
        )
    else:
        if _is_terminal(sys.stdin):
            print(STDIO_TERMINAL_NOTE, file=sys.stderr, flush=True)
        coro = run.serve_stdio(
            model=model, allowlist=allowlist, structured_content=structured, sandbox=sandbox
        )
    try:
        return run.run(coro)
    except OSError as exc:
        raise CliError(f"cannot serve: {exc}", code=1) from None
