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


def paused_during_startup(handler: Callable[_P, _R]) -> Callable[_P, _R]:
    """`handler` with the collector paused until it resumes it itself (before serving) or
    returns or raises (a refused start-up, or the end of serving)."""

    @functools.wraps(handler)
    def run(*args: _P.args, **kwargs: _P.kwargs) -> _R:
        pause_collector()
        try:
            return handler(*args, **kwargs)
        finally:
            resume_collector()

    return run
