"""How long one call waits for news and how much output it may return: the limits Shell
Sessions' `exec_command` / `write_stdin` and Code Mode's `exec` / `wait` share (the spec
gives cells the shells' output budgets), in one place both may read."""

from __future__ import annotations

YIELD_MIN_MS = 0
YIELD_MAX_MS = 60_000
YIELD_DEFAULT_MS = 10_000
OUTPUT_MIN_BYTES = 1024
OUTPUT_MAX_BYTES = 262_144
OUTPUT_DEFAULT_BYTES = 51_200
TOKENS_MIN = 256
TOKENS_MAX = 65_536
BYTES_PER_TOKEN = 4
