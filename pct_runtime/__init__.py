"""pct_runtime: the Pi Codex Toolkit runtime, importable without any UI (a test enforces it)."""

from __future__ import annotations

#: The toolkit's name as agents and diagnostics see it (the command stays `pct`).
TOOLKIT_NAME = "pct"


def __getattr__(name: str) -> str:
    # `__version__` stays importable, resolved lazily so importing the package stays cheap.
    if name == "__version__":
        from pct_runtime.version import version  # on use: importlib.metadata is not free

        return version()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = ["TOOLKIT_NAME", "__version__"]
