"""The parser of `pct config path` and `pct config show` (run by `config_cmd`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import argparse


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = sub.add_parser(
        "config",
        help="show the configuration file path or its effective contents",
        description="Inspect the Pi Codex Toolkit configuration file (shared with Pi).",
    )
    actions = parser.add_subparsers(dest="config_command", metavar="ACTION")
    actions.required = True
    actions.add_parser(
        "path",
        help="print the configuration file path",
        description="Print <agent dir>/extensions/pi-codex-toolkit.json; the agent dir is "
        "$PI_CODING_AGENT_DIR or ~/.pi/agent.",
    )
    show_parser = actions.add_parser(
        "show",
        help="print the effective configuration as JSON",
        description="Print the effective configuration as JSON, defaults filled in (pct's "
        "own `pct` section included) and unknown fields kept. Exit 1 (message on stderr) "
        "when the file is invalid.",
    )
    show_parser.add_argument(
        "--defaults",
        action="store_true",
        help="print every key with its default value instead (the file is not read)",
    )
