"""The `pct` subcommands: `<command>_cmd.run(args)` runs one, `args.<command>_args` builds
its parser; `pct_runtime.cli.SUBCOMMANDS` pairs them. The other modules are what commands share."""
