"""Keep the cyclic garbage collector out of an apply.

Parsing and matching a large patch allocate tens of thousands of small containers (chunks,
tuples, lists) that never form cycles and die by reference counting. Each 700 of them would
trigger a collector pass, and the older generations' passes walk every tracked object of the
process (a long-running server holds many), so the cost of a big patch grew faster than its
size. The collector is paused for the duration and restored after; nested or concurrent
applies (worker threads) share one pause, and the state before the first one is restored
when the last one ends.
"""

from __future__ import annotations

import _thread
import gc
from collections.abc import Iterator
from contextlib import contextmanager

# `_thread`'s lock is `threading.Lock` itself, without importing threading into every
# `pct apply-patch` process.
_lock = _thread.allocate_lock()
_depth = 0
_was_enabled = False


@contextmanager
def collector_paused() -> Iterator[None]:
    global _depth, _was_enabled
    with _lock:
        if _depth == 0:
            _was_enabled = gc.isenabled()
            gc.disable()
        _depth += 1
    try:
        yield
    finally:
        with _lock:
            _depth -= 1
            if _depth == 0 and _was_enabled:
                gc.enable()
