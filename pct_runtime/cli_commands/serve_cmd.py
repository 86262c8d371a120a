"""`pct serve [--model P/ID] [--tools A,B] [--http [HOST:]PORT] [--structured-content]
[--sandbox MODE] [--sandbox-network]`: serve MCP."""

from __future__ import annotations

import logging
import sys
from collections.abc import Coroutine
from pathlib import Path
from typing import TYPE_CHECKING

from pct_runtime.cli_commands.errors import CliError
from pct_runtime.cli_commands.host_checks import load_host_model, warn_unknown_tools
from pct_runtime.cli_commands.sandbox_opts import SandboxStartError, startup_sandbox
from pct_runtime.config.paths import agent_dir, config_path
from pct_runtime.config.pct_section import pct_section_error
from pct_runtime.config.reload import not_regular_message
from pct_runtime.config.store import read_document
from pct_runtime.serve.startup import paused_during_startup

if TYPE_CHECKING:
    import argparse


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
        from pydantic._internal import _config  # noqa: PLC0415 - before the MCP SDK loads

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
    problem = pct_section_error(read_document(path) or {})
    if problem is None:
        return None
    return (
        f"Pi Codex Toolkit config error: invalid-config ({problem}) in {path}; "
        "fix the field, then start again."
    )


@paused_during_startup
def run(args: argparse.Namespace) -> int:
    _defer_model_builds()

    logging.basicConfig(
        level=logging.WARNING, stream=sys.stderr, format="pct: %(levelname)s %(name)s: %(message)s"
    )
    model: str | None = args.model
    refused = not_regular_message(config_path())
    if refused is not None:
        raise CliError(refused, code=1)
    # Pi's files are checked (and their problems said) before serving: a served session
    # has no other place to report that custom providers or the default model are gone.
    load_host_model(agent_dir(), model, Path.cwd())
    allowlist = parse_allowlist(args.tools)
    warn_unknown_tools(allowlist)
    try:
        sandbox, warning = startup_sandbox(args.sandbox, args.sandbox_network, config_path())
    except SandboxStartError as exc:
        raise CliError(str(exc), code=1) from None
    if warning:
        print(warning, file=sys.stderr, flush=True)
    refused = pct_section_refusal(config_path())
    if refused is not None:
        raise CliError(refused, code=1)
    # Start-up: the MCP SDK's models are defined when this loads, so only after
    # `_defer_model_builds`, and only once the checks above let the server start.
    from pct_runtime.serve import run as serving  # noqa: PLC0415

    structured: bool = args.structured_content
    coro: Coroutine[object, object, int]
    if args.http is not None:
        # Start-up: the HTTP stack (uvicorn, starlette) loads only for --http.
        from pct_runtime.serve.mcp.http import parse_listen  # noqa: PLC0415

        try:
            host, port = parse_listen(args.http)
        except ValueError as exc:
            raise CliError(f"--http: {exc}") from None
        coro = serving.serve_http(
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
        coro = serving.serve_stdio(
            model=model, allowlist=allowlist, structured_content=structured, sandbox=sandbox
        )
    try:
        return serving.run(coro)
    except OSError as exc:
        raise CliError(f"cannot serve: {exc}", code=1) from None
