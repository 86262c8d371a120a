"""The runtime core: one config store, one host, many sessions — the one API for every UI.

Modules import one way, bottom to top: `ui`, `projection` → `context` → `calls`, `apply`,
`journaling`, `contracts`, `inputs` → `bindings`, `payload` → `session` → `core`. This
package's namespace re-exports the public names (`Runtime`, `RuntimeSession`, ...), so
callers import from `pct_runtime.runtime`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pct_runtime import lazy

if TYPE_CHECKING:
    from pct_runtime.invocation import InvocationHooks
    from pct_runtime.runtime.context import CapabilityBinding, SessionContext
    from pct_runtime.runtime.core import (
        EMBEDDER_OWNER,
        ReloadOutcome,
        Runtime,
        UnknownModelError,
        native_names,
    )
    from pct_runtime.runtime.descriptors import default_bindings
    from pct_runtime.runtime.projection import ModelRef, Projection
    from pct_runtime.runtime.session import RUNTIME_EVENTS_CHANNEL, RuntimeSession

# Names load on first use, so `pct status` can plan its inputs without importing the
# session and the call path.
_HOME: dict[str, str] = {
    "EMBEDDER_OWNER": "pct_runtime.runtime.core",
    "RUNTIME_EVENTS_CHANNEL": "pct_runtime.runtime.session",
    "CapabilityBinding": "pct_runtime.runtime.context",
    "InvocationHooks": "pct_runtime.invocation",
    "ModelRef": "pct_runtime.runtime.projection",
    "Projection": "pct_runtime.runtime.projection",
    "ReloadOutcome": "pct_runtime.runtime.core",
    "Runtime": "pct_runtime.runtime.core",
    "RuntimeSession": "pct_runtime.runtime.session",
    "SessionContext": "pct_runtime.runtime.context",
    "UnknownModelError": "pct_runtime.runtime.core",
    "default_bindings": "pct_runtime.runtime.descriptors",
    "native_names": "pct_runtime.runtime.core",
}

__all__ = [
    "EMBEDDER_OWNER",
    "RUNTIME_EVENTS_CHANNEL",
    "CapabilityBinding",
    "InvocationHooks",
    "ModelRef",
    "Projection",
    "ReloadOutcome",
    "Runtime",
    "RuntimeSession",
    "SessionContext",
    "UnknownModelError",
    "default_bindings",
    "native_names",
]


__getattr__ = lazy.exports(__name__, _HOME)
