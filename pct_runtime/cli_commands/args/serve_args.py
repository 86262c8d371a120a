"""The parser of `pct serve` (run by `serve_cmd`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from pct_runtime.cli_commands.args.sandbox_args import add_sandbox_arguments

if TYPE_CHECKING:
    import argparse


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
    add_sandbox_arguments(parser)
