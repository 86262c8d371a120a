"""pct_runtime: the Pi Codex Toolkit runtime, importable without any UI (a test enforces it)."""

from __future__ import annotations

from functools import cache
from importlib import metadata

#: The toolkit's name as agents and diagnostics see it (the command stays `pct`).
TOOLKIT_NAME = "pct"
#: The distribution on PyPI: `pct` there is an unrelated project, so ours has its own name.
DISTRIBUTION = "pi-codex-toolkit"


@cache
def version() -> str:
    """The installed distribution's version: the one place every `--version`, MCP handshake
    and diagnostics record reads it, so they never disagree. A source tree that was never
    installed reports `unknown` rather than a guess."""
    try:
        return metadata.version(DISTRIBUTION)
    except metadata.PackageNotFoundError:
        return "unknown"


def __getattr__(name: str) -> str:
    # `__version__` stays importable, resolved lazily so importing the package stays cheap.
    if name == "__version__":
        return version()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = ["DISTRIBUTION", "TOOLKIT_NAME", "__version__", "version"]
