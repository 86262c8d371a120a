"""The parser of `pct status` (run by `status_cmd`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from pct_runtime.cli_commands.args.sandbox_args import add_sandbox_arguments

if TYPE_CHECKING:
    import argparse


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = sub.add_parser(
        "status",
        help="print the capability status of a fresh session",
        description=(
            "Print what each capability would be for a fresh session: configured, "
            "effective and why not. Reads the real config file and Pi's models.json, "
            "auth.json and settings.json under the agent dir."
        ),
    )
    parser.add_argument(
        "--model",
        metavar="PROVIDER/ID",
        help="current model (split at the first '/'; default: Pi's settings.json default)",
    )
    parser.add_argument(
        "--tools",
        metavar="NAME,...",
        help="allowlist of visible tool names, as `pct serve --tools` (natives included)",
    )
    parser.add_argument("--headless", action="store_true", help="no interactive UI is available")
    parser.add_argument(
        "--session",
        choices=("mcp", "embedded"),
        default="mcp",
        help="session kind (default: mcp, which has no provider-payload hook)",
    )
    parser.add_argument(
        "--live",
        action="store_true",
        help="print the live status of every running runtime (pct serve, the console)",
    )
    add_sandbox_arguments(parser)
    # Read-only, and any probe's helper is closed before `run` returns: nothing runs at exit.
    parser.set_defaults(quick_exit=True)
