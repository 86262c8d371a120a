"""What a capability's binding sees of its session: one typed context, and typed slots.

`CapabilityContext` is the one declaration of everything a binding may ask of a session
(the runtime's `runtime.context.SessionContext` implements it). Instances a session builds
once and shares — the shell manager Code Mode also drives, the output owner, a
capability's own manager — live in its `Slots`, each under a typed `Key[T]`, so a reader
gets a `T` back without a cast and a viewer can look without building anything.
"""

from __future__ import annotations

import logging
import weakref
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Generic, Protocol, TypeVar

from pct_runtime.capabilities.base import NestedCalls
from pct_runtime.config.commands import CommandsFields
from pct_runtime.config.schema import ToolkitConfig
from pct_runtime.debug import DebugSink
from pct_runtime.host.pi.model_registry import Model, ModelRegistry
from pct_runtime.host.system.sandbox import Sandbox

if TYPE_CHECKING:  # annotations only: `pct status` loads no output capture (nor asyncio)
    from pct_runtime.output import OutputOwner

_log = logging.getLogger(__name__)
T = TypeVar("T")

Closer = Callable[[], Awaitable[None]]


class Key(Generic[T]):
    """The typed name of one per-session instance. It holds each session's instance itself
    (weakly, by the session's `Slots`), which is what lets `Slots.get` return a `T`."""

    def __init__(self, name: str) -> None:
        self.name = name
        self._held: weakref.WeakKeyDictionary[Slots, T] = weakref.WeakKeyDictionary()

    def __repr__(self) -> str:
        return f"Key({self.name!r})"


class Slots:
    """One session's shared instances, built on first use and closed when the session ends.

    `on_built(name)` is told whenever a key gets an instance (the first time, or again
    after `drop`), so viewers can subscribe to a manager the session just (re)bound.
    """

    def __init__(self, on_built: Callable[[str], None] = lambda name: None) -> None:
        self._on_built = on_built
        self._forget: list[Callable[[], object]] = []
        self._closers: list[Closer] = []
        self._seen: set[str] = set()

    def get(
        self,
        key: Key[T],
        factory: Callable[[], T],
        close: Callable[[T], Awaitable[None]] | None = None,
    ) -> T:
        """The session's instance for `key`, built by `factory` on first use.

        `close(instance)` is registered once, on the key's first build, and closes whichever
        instance the key holds when the session ends: keys keep their first-build order
        (closed newest first) even when `drop` made a later call bind a fresh instance.
        """
        held = key._held
        if self not in held:
            held[self] = factory()
            self._on_built(key.name)
            if key.name not in self._seen:
                self._seen.add(key.name)
                self._forget.append(lambda: held.pop(self, None))
                if close is not None:

                    async def close_current() -> None:
                        current = held.get(self)
                        if current is not None:
                            await close(current)

                    self.on_close(close_current)
        return held[self]

    def peek(self, key: Key[T]) -> T | None:
        """The instance of `key` if one was built, else None; never builds (viewers)."""
        return key._held.get(self)

    def drop(self, key: Key[T]) -> T | None:
        """Forget the instance of `key` (after its cleanup succeeded); the next `get` builds
        a fresh one. Returns the dropped instance, if any."""
        return key._held.pop(self, None)

    def on_close(self, closer: Closer) -> None:
        """Register async cleanup that runs when the session ends (newest first)."""
        self._closers.append(closer)

    async def aclose(self) -> list[BaseException]:
        """Run every closer, newest first; collect failures instead of stopping early."""
        errors: list[BaseException] = []
        while self._closers:
            closer = self._closers.pop()
            try:
                await closer()
            except Exception as exc:
                _log.exception("session cleanup step failed")
                errors.append(exc)
        for forget in self._forget:
            forget()
        return errors


#: The session's output owner (recovery files live until the session ends).
OUTPUT: Key[OutputOwner] = Key("output")
#: The session's `--sandbox` confinement.
SANDBOX: Key[Sandbox] = Key("sandbox")


class SessionCatalog(Protocol):
    """A session's discovery answers over the decision layer, as plain data."""

    def available(self) -> bool: ...

    def catalog(self) -> Sequence[tuple[str, str | None, str]]:
        """Every managed name in canonical order: (name, the session's own description or
        None for the Toolkit's definition, state)."""
        ...

    async def load(
        self, names: Sequence[str]
    ) -> tuple[tuple[str, ...], tuple[tuple[str, str], ...]]:
        """Recheck and load `names` (re-syncing the session): (loaded, (name, reason)...)."""
        ...


class CapabilityContext(Protocol):
    """Everything a capability's binding (and its payload hooks) may ask of its session."""

    @property
    def session_id(self) -> str: ...

    @property
    def cwd(self) -> Path: ...

    @property
    def agent_dir(self) -> Path: ...

    @property
    def debug(self) -> DebugSink: ...

    @property
    def slots(self) -> Slots:
        """The session's shared instances (the shell manager, each capability's own)."""
        ...

    @property
    def calls(self) -> NestedCalls:
        """The session's call pipeline, which runs a Code Mode cell's nested calls."""
        ...

    def config(self) -> ToolkitConfig:
        """The runtime's current config."""
        ...

    def commands(self) -> CommandsFields:
        """The runtime's current `pct.commands` (the command policy; changes on reload)."""
        ...

    def model(self) -> Model | None:
        """The session's current model; a model switch shows here."""
        ...

    def models(self) -> ModelRegistry:
        """The runtime's model registry (Pi's models, credentials and settings)."""
        ...

    def admitted(self) -> tuple[str, ...]:
        """The session's names admitted right now (visible plus nested-only)."""
        ...

    def refusal(self, name: str) -> str | None:
        """The refusal a direct call to `name` gets under the committed plan (why a nested
        call to it is not admitted); None when it works, or before a sync."""
        ...

    def on_close(self, closer: Closer) -> None:
        """Register async cleanup that runs when the session ends (newest first)."""
        ...

    def output(self) -> OutputOwner:
        """The session's output owner (recovery files live until the session ends)."""
        ...

    def sandbox(self) -> Sandbox | None:
        """The session's `--sandbox` confinement; None without a sandbox."""
        ...

    def read_only(self) -> bool:
        """The session runs under `--sandbox read-only` (every patch is refused)."""
        ...

    def discovery(self) -> SessionCatalog:
        """Eligibility and loads over the decision layer, for this session."""
        ...

    def image_executor(self) -> Model | str:
        """The decision layer's image model (current route → Codex → API key), or why none."""
        ...
