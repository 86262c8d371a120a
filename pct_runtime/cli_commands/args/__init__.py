"""The parser of each `pct` subcommand: `<command>_args.register(subparsers)` adds it.

A parser module imports only what its arguments need (argparse's types, the sandbox
modes), never what its command runs: `pct --help` and a usage error build every parser, and
`pct <command>` builds only its own. The module that runs a command is `<command>_cmd`
beside this package; `pct_runtime.cli.SUBCOMMANDS` pairs the two.
"""
