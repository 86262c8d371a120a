"""The runtime core: one config store, one host, many sessions — the one API for every UI.

Modules import one way, bottom to top: `ui`, `services` → `projection`, `sandbox` →
`managers`, `discovery`, `apply`, `contracts`, `inputs` → `bindings`, `payload` → `session` →
`core`. This package's namespace re-exports the public names (`Runtime`,
`RuntimeSession`, ...), so callers import from `pct_runtime.runtime`.
"""

from __future__ import annotations

from pct_runtime.invocation import InvocationHooks
from pct_runtime.runtime.bindings import default_bindings
from pct_runtime.runtime.core import (
    EMBEDDER_OWNER,
    ReloadOutcome,
    Runtime,
    UnknownModelError,
    native_names,
)
from pct_runtime.runtime.projection import ModelRef, Projection
from pct_runtime.runtime.services import CapabilityBinding, SessionServices
from pct_runtime.runtime.session import RUNTIME_EVENTS_CHANNEL, RuntimeSession

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
    "SessionServices",
    "UnknownModelError",
    "default_bindings",
    "native_names",
]
