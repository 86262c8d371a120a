"""The cyclic garbage collector paused while `pct serve` starts.

Start-up is imports (the MCP SDK's ~560 pydantic models, pct's own modules) and the
runtime's build: hundreds of thousands of long-lived objects and almost no garbage
(measured: ~800 objects freed by ~220 collections). Each collection still walks the young
objects, and the older generations the whole heap, which is ~9% of the CPU time before
the first `initialize` answer. So the collector is off from the command's start until the
server is about to read its first request; then every object made so far is frozen
(`gc.freeze`: kept out of later collections, as it would only ever be found alive) and
collection resumes as before. Nothing is lazy: the same work runs, without the walks.
"""

from __future__ import annotations

import functools
import gc
from collections.abc import Callable
from typing import ParamSpec, TypeVar

_P = ParamSpec("_P")
_R = TypeVar("_R")

#: Whether `pause_collector` switched the collector off and `resume_collector` has not yet
#: switched it back on (a collector already off is left to whoever turned it off).
_paused = False


def pause_collector() -> None:
    """Switch the collector off for start-up, unless it already is."""
    global _paused
    if gc.isenabled():
        gc.disable()
        _paused = True


def resume_collector() -> None:
    """Freeze what start-up made and switch the collector back on; once, and only if
    `pause_collector` switched it off. Called before serving the first request, and by
    `paused_during_startup` whatever the command's outcome."""
    global _paused
    if _paused:
        _paused = False
        gc.freeze()
        gc.enable()


def defer_adapter_builds() -> None:
    """Build each pydantic `TypeAdapter`'s validator on first use instead of at creation.

    The MCP SDK makes ~16 adapters at import (every request, result and notification union
    of both sides, the client session's result unions); a server validates with a few of
    them. pydantic defers a model's build with `defer_build` (switched on for `pct serve`
    beside this), but an adapter over a union has no model config to read it from, so it
    builds at once. An adapter whose config says `defer_build=False` still builds at once;
    if a future pydantic renames what this wraps, start-up is merely slower.
    """
    try:
        from pydantic.type_adapter import TypeAdapter
    except ImportError:  # pragma: no cover - pydantic is a dependency
        return
    current = TypeAdapter.__dict__.get("_defer_build")
    if not isinstance(current, property) or getattr(current.fget, "_pct_deferred", False):
        return

    def deferred(adapter: TypeAdapter[object]) -> bool:
        config = adapter._config if adapter._config is not None else adapter._model_config
        return (config or {}).get("defer_build", True) is True

    deferred._pct_deferred = True  # type: ignore[attr-defined]
    TypeAdapter._defer_build = property(deferred)  # type: ignore[method-assign,assignment]


def paused_during_startup(handler: Callable[_P, _R]) -> Callable[_P, _R]:
    """`handler` with the collector paused until it resumes it itself (before serving) or
    returns or raises (a refused start-up, or the end of serving)."""

    @functools.wraps(handler)
    def run(*args: _P.args, **kwargs: _P.kwargs) -> _R:
        defer_adapter_builds()
        pause_collector()
        try:
            return handler(*args, **kwargs)
        finally:
            resume_collector()

    return run
