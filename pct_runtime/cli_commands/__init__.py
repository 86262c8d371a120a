"""One module per `pct` subcommand; each exposes `register(subparsers)`."""
