"""`pct config path` and `pct config show`.

`show` prints the effective configuration as the JSON document a save would write: defaults
filled in, unknown fields kept where they are, and pct's own `pct` section (sandbox,
journal) with its defaults filled in too, so every key pct reads is listed. `--defaults`
prints what each key is when the file does not set it. When the file cannot be used, the
effective configuration is the all-off defaults; the error goes to stderr, exit status 1.
"""

from __future__ import annotations

import json
import sys
from typing import TYPE_CHECKING

from pct_runtime.config.paths import config_path

if TYPE_CHECKING:
    import argparse


def run(args: argparse.Namespace) -> int:
    return run_path(args) if args.config_command == "path" else run_show(args)


def run_path(args: argparse.Namespace) -> int:
    print(config_path())
    return 0


def run_show(args: argparse.Namespace) -> int:
    # Start-up: `pct config path` prints a path; the schema and the store load for `show`.
    from pct_runtime.config import (  # noqa: PLC0415
        ConfigStore,
        default_config,
        reload_message,
        to_json_obj,
    )
    from pct_runtime.config.pct_section import PCT_SECTION, effective_section  # noqa: PLC0415

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
