"""The record a capability package exports: its key, its tool definitions, its binding.

Each package's `descriptor` module (`capabilities/<name>/descriptor.py`; the OpenAI seam
for the capabilities it assembles) exports `DESCRIPTORS`. Only the capability registry
(`capabilities/registry.py`) imports those modules, so the discovery catalog and the
runtime's bindings iterate descriptors instead of naming packages.

A binding asks its session for what it needs through its own small Protocol (`S`); the
runtime's session port implements all of them. Descriptor modules import their package's
heavy parts inside `specs`/`bind`, so importing a descriptor stays cheap.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Generic, TypeVar

from pct_runtime.capabilities.base import Tool, ToolSpec

S = TypeVar("S", contravariant=True)


@dataclass(frozen=True)
class Descriptor(Generic[S]):
    """One capability as the catalog and the runtime's bindings see it."""

    #: Its registry row's key (`pct_runtime.decide.registry`), also its config section.
    key: str
    #: Its tool definitions, built without any executor (the discovery catalog).
    specs: Callable[[], Sequence[ToolSpec]]
    #: Its tools for one session, from that session's services.
    bind: Callable[[S], Sequence[Tool]]
