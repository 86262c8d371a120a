"""The record a capability package exports: its key, tools, binding and session hooks.

Each package's `descriptor` module (`capabilities/<name>/descriptor.py`; the OpenAI seam
for the capabilities it assembles) exports `DESCRIPTORS`. Only the capability registry
(`capabilities/table.py`) imports those modules, so the discovery catalog, the
runtime's bindings, a sync's start fence and cleanups and the payload hooks iterate
descriptors instead of naming packages (docs/ARCHITECTURE.md).

A binding asks its session for what it needs through one typed context
(`capabilities.context.CapabilityContext`), which the runtime implements. Hooks get plain
facts (a bool, a config,
a mapping of active decisions), never a decide-layer type: capabilities sit below decide.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

from pct_runtime.capabilities.base import CallableTool, Tool, ToolSpec
from pct_runtime.capabilities.context import CapabilityContext, Slots
from pct_runtime.config.schema import ToolkitConfig
from pct_runtime.host.pi.model_registry import Model


@dataclass(frozen=True)
class Cleanup:
    """What a sync does to the per-session resource a capability built, after the start fence.

    `run(store, kept, settings)` closes, resets or reconfigures the capability's instance
    in `store` (nothing built: nothing to do). `kept` is the plan's verdict (the decision
    layer's `CapabilityRow.kept`); `settings` is what `settings(config)` read of the
    config. It returns True when it confirmed a close and raises when a close did not
    confirm: the sync is then rejected and retried.
    """

    run: Callable[[Slots, bool, Hashable], Awaitable[bool]]
    #: The part of the config the cleanup applies (equal settings need no second pass).
    settings: Callable[[ToolkitConfig | None], Hashable] = lambda config: None
    #: Whether status reports an unconfirmed cleanup of it (`Code cleanup pending`).
    reports_pending: bool = False


#: Active decision key -> its effective backend (`native`, `sidecar`, ...; None without one),
#: from the session's committed plan: what a payload hook may act on.
ActiveDecisions = Mapping[str, str | None]


class PayloadHook(Protocol):
    """An embedded session's provider-request and compaction hooks (`embedded` only)."""

    async def before_provider_request(
        self,
        context: CapabilityContext,
        payload: object,
        active: ActiveDecisions,
        newest_details: object,
    ) -> object:
        """The payload to send (a new object when changed; never mutates `payload`)."""
        ...

    async def before_compact(
        self, context: CapabilityContext, preparation: object
    ) -> object | None:
        """A compaction result replacing the agent's summary, or None (compact natively)."""
        ...


#: `probe(config, platform, ui_available, model, full)`: why the host cannot run the
#: capability (a status reason), or None. `full` is an explicit `pct status`, which may
#: start helper processes; a session start runs only file checks. A capability with a host
#: requirement exports it as `PROBE` from the module its row names (`CapabilityRow.probe`),
#: not from its descriptor, so a status reads it without loading any tool.
HostProbe = Callable[[ToolkitConfig, str, bool, Model | None, bool], str | None]


@dataclass(frozen=True)
class Descriptor:
    """One capability as the catalog, the runtime's bindings and a session's sync see it."""

    #: Its declaration's row key (`capabilities/<name>/declaration.py`), also its config section.
    key: str
    #: Its tool definitions, built without any executor (the discovery catalog).
    specs: Callable[[], Sequence[ToolSpec]]
    #: Its tools for one session, from that session's context.
    bind: Callable[[CapabilityContext], Sequence[Tool | CallableTool]]
    #: Tools that start new work: refused while a candidate plan no longer keeps it.
    starts: tuple[str, ...] = ()
    #: What a sync does to its per-session resource.
    cleanup: Cleanup | None = None
    #: Provider-request / compaction hooks of an embedded session.
    payload: PayloadHook | None = None
