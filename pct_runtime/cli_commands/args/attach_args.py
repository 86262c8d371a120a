"""The parser of `pct attach codex|claude|pi` (run by `attach_cmd`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import argparse

AGENTS = ("codex", "claude", "pi")


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = sub.add_parser(
        "attach",
        help="print MCP config that attaches an agent (codex, claude, pi) to pct",
        description="Print ready-to-paste configuration that attaches an agent to pct over MCP.",
    )
    parser.add_argument("agent", choices=AGENTS)
    parser.add_argument(
        "--http",
        metavar="URL",
        help="attach to a running HTTP server (e.g. http://127.0.0.1:8765/mcp)",
    )
    parser.add_argument(
        "--pi-version",
        metavar="X.Y",
        help="the Pi to attach (default: ask `pi --version`; both snippets when unknown)",
    )
