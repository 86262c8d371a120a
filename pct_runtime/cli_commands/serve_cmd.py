"""`pct serve [--model P/ID] [--tools A,B] [--http [HOST:]PORT]`: serve the runtime over MCP."""

from __future__ import annotations

import argparse
import logging
import sys
from typing import Any


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


def handle(args: argparse.Namespace) -> int:
    from pct_runtime.cli import CliError

    _defer_model_builds()

    logging.basicConfig(
        level=logging.WARNING, stream=sys.stderr, format="pct: %(levelname)s %(name)s: %(message)s"
    )
    model: str | None = args.model
    if model is not None:
        _check_model(model)
    allowlist = parse_allowlist(args.tools)
    from pct_runtime.serve import run

    coro: Any
    if args.http is not None:
        from pct_runtime.serve.http import parse_listen

        try:
            host, port = parse_listen(args.http)
        except ValueError as exc:
            raise CliError(f"--http: {exc}") from None
        coro = run.serve_http(host, port, model=model, allowlist=allowlist)
    else:
        coro = run.serve_stdio(model=model, allowlist=allowlist)
    try:
        return run.run(coro)
    except OSError as exc:
        raise CliError(f"cannot serve: {exc}", code=1) from None


def _check_model(text: str) -> None:
    """`PROVIDER/ID` must split at the first `/` and name a model the registry knows."""
    from pct_runtime.cli import CliError

    provider, sep, model_id = text.partition("/")
    if not sep or not provider or not model_id:
        raise CliError(f"--model must be PROVIDER/ID, got {text!r}")
    try:
        from pct_runtime.config.paths import agent_dir
        from pct_runtime.host.models import ModelRegistry
    except ImportError:  # pragma: no cover - the host layer ships with pct
        return
    registry = ModelRegistry.load(agent_dir())
    if registry.find(provider, model_id) is None:
        raise CliError(
            f"unknown model {text!r}: not in Pi's model registry "
            "(models.json or the built-in catalog)"
        )
