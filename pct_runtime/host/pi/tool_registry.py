"""The host tool registry: registrations with owners, name winners and an allowlist.

This is our `getAllTools()`: every registration carries an owner identity; for each
name the *last* registration wins (a later extension overrides an earlier one, and any
extension overrides a built-in); an allowlist (`pct serve --tools`) filters names out of
the visible projection entirely. Ownership of a name is then one of three distinct
outcomes, exactly as the spec requires:

* `owned`   — the visible winner is the runtime's own registration;
* `foreign` — another registration visibly won the name (a conflict);
* `absent`  — nothing visible carries the name (filtered, or never registered).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Literal

from pct_runtime.datarecord import datarecord
from pct_runtime.host.pi.names import NATIVE_TOOLS

#: Owner identity of Pi's native tools (`sourceInfo.source === "builtin"`).
BUILTIN_OWNER = "builtin"
#: Owner identity of the runtime's own registrations.
RUNTIME_OWNER = "pct"

OwnershipState = Literal["owned", "foreign", "absent"]


@datarecord
class Registration:
    name: str
    owner: str
    description: str = ""

    @property
    def builtin(self) -> bool:
        return self.owner == BUILTIN_OWNER


@datarecord
class Ownership:
    state: OwnershipState
    winner: Registration | None = None


class ToolRegistry:
    """Ordered registrations; the visible projection is winners that pass the allowlist."""

    def __init__(
        self,
        registrations: Iterable[Registration] = (),
        allowlist: Iterable[str] | None = None,
    ) -> None:
        self._registrations: list[Registration] = list(registrations)
        self.allowlist: frozenset[str] | None = None if allowlist is None else frozenset(allowlist)

    @classmethod
    def with_natives(cls, allowlist: Iterable[str] | None = None) -> ToolRegistry:
        """A registry holding Pi's native `read`, `bash`, `edit`, `write` as built-ins."""
        return cls((Registration(name, BUILTIN_OWNER) for name in NATIVE_TOOLS), allowlist)

    def register(self, name: str, owner: str, description: str = "") -> Registration:
        registration = Registration(name, owner, description)
        self._registrations.append(registration)
        return registration

    def unregister(self, name: str, owner: str) -> None:
        self._registrations = [
            r for r in self._registrations if not (r.name == name and r.owner == owner)
        ]

    def set_allowlist(self, names: Iterable[str] | None) -> None:
        self.allowlist = None if names is None else frozenset(names)

    def winner(self, name: str) -> Registration | None:
        """The visible winning registration for `name`, or None when absent."""
        if self.allowlist is not None and name not in self.allowlist:
            return None
        for registration in reversed(self._registrations):
            if registration.name == name:
                return registration
        return None

    def visible(self) -> list[Registration]:
        """Winners in first-registration order (the `getAllTools()` projection)."""
        seen: list[str] = []
        for registration in self._registrations:
            if registration.name not in seen:
                seen.append(registration.name)
        out = []
        for name in seen:
            winner = self.winner(name)
            if winner is not None:
                out.append(winner)
        return out

    def snapshot(self) -> ToolSnapshot:
        return ToolSnapshot(tuple(self.visible()))


@datarecord
class ToolSnapshot:
    """An immutable read of the visible projection, for pure planning."""

    tools: tuple[Registration, ...]

    @classmethod
    def of(cls, *registrations: Registration) -> ToolSnapshot:
        return cls(tuple(registrations))

    def winner(self, name: str) -> Registration | None:
        for tool in self.tools:
            if tool.name == name:
                return tool
        return None

    def ownership(self, name: str, identity: str | None = RUNTIME_OWNER) -> Ownership:
        """owned / foreign / absent. An unresolved identity (None) owns nothing: absent."""
        if identity is None:
            return Ownership("absent")
        winner = self.winner(name)
        if winner is None:
            return Ownership("absent")
        return Ownership("owned" if winner.owner == identity else "foreign", winner)

    def owned(self, name: str, identity: str | None = RUNTIME_OWNER) -> bool:
        return self.ownership(name, identity).state == "owned"

    def unavailable(self, name: str, identity: str | None = RUNTIME_OWNER) -> bool:
        """Activation reading: absent and foreign both block (legacy `conflict`)."""
        return self.ownership(name, identity).state != "owned"

    def visibly_foreign(self, name: str, identity: str | None = RUNTIME_OWNER) -> bool:
        """Dispatch reading: only a visible foreign winner is a conflict."""
        return self.ownership(name, identity).state == "foreign"

    def is_builtin_winner(self, name: str) -> bool:
        winner = self.winner(name)
        return winner is not None and winner.builtin

    def describe(self, name: str) -> str | None:
        winner = self.winner(name)
        return None if winner is None else winner.description

    @property
    def names(self) -> list[str]:
        return [tool.name for tool in self.tools]
