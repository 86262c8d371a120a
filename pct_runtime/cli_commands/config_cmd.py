"""`pct config path` and `pct config show`.

`show` prints the effective configuration as the JSON document a save would write: defaults
filled in, unknown fields kept where they are, and pct's own `pct` section (sandbox,
journal) with its defaults filled in too, so every key pct reads is listed. `--defaults`
prints what each key is when the file does not set it. When the file cannot be used, the
effective configuration is the all-off defaults; the error goes to stderr, exit status 1.
"""

from __future__ import annotations

import argparse
import json
import sys


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = sub.add_parser(
        "config",
        help="show the configuration file path or its effective contents",
        description="Inspect the Pi Codex Toolkit configuration file (shared with Pi).",
    )
    actions = parser.add_subparsers(dest="config_command", metavar="ACTION")
    actions.required = True
    path_parser = actions.add_parser(
        "path",
        help="print the configuration file path",
        description="Print <agent dir>/extensions/pi-codex-toolkit.json; the agent dir is "
        "$PI_CODING_AGENT_DIR or ~/.pi/agent.",
    )
    path_parser.set_defaults(handler=run_path)
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
    show_parser.set_defaults(handler=run_show)


def run_path(args: argparse.Namespace) -> int:
    from pct_runtime.config.paths import config_path

    print(config_path())
    return 0


def run_show(args: argparse.Namespace) -> int:
    from pct_runtime.config import ConfigStore, default_config, reload_message, to_json_obj
    from pct_runtime.config.paths import config_path
    from pct_runtime.config.pct_section import PCT_SECTION, effective_section

    if args.defaults:
        document = to_json_obj(default_config())
        document[PCT_SECTION] = effective_section({})
        print(json.dumps(document, indent=2, ensure_ascii=False))
        return 0
    result = ConfigStore(config_path()).read()
    document = to_json_obj(result.config, result.raw)
    document[PCT_SECTION] = effective_section(result.raw)
    print(json.dumps(document, indent=2, ensure_ascii=False))
    if result.error is not None:
        print(reload_message(result.error, result.has_last_known_good), file=sys.stderr)
        return 1
    return 0
