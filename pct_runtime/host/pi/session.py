"""Host session state: what kind of session, which model, whether a person can answer.

Session kinds are pinned in docs/ARCHITECTURE.md: an `mcp` session (an attached MCP client) has no
provider-payload hook; an `embedded` session (a Python agent embedding the runtime) calls
the payload and compaction hooks. Nothing else differs between them.
"""

from __future__ import annotations

from typing import Literal

from pct_runtime.datarecord import datarecord, field
from pct_runtime.host.pi.model_registry import Model

SessionKind = Literal["mcp", "embedded"]
SESSION_KINDS: tuple[SessionKind, ...] = ("mcp", "embedded")


def _new_id() -> str:
    """A new session id. uuid loads `platform`; `pct status` imports this module for
    `SessionKind` alone and opens no session, so it loads uuid only here."""
    import uuid

    return uuid.uuid4().hex


@datarecord(frozen=False)
class HostSession:
    """One runtime session.

    `active_tools` is this session's live active list (`getActiveTools()`); `discovered`
    are deferred names `find_tools` loaded in this session (never persisted). `lineage`
    keys hidden-native records: a reload keeps it, new/resume/fork start a new one.
    """

    kind: SessionKind = "mcp"
    model: Model | None = None
    ui_available: bool = False
    id: str = field(default_factory=_new_id)
    lineage: str = ""
    active_tools: list[str] = field(default_factory=list)
    discovered: set[str] = field(default_factory=set)

    def __post_init__(self) -> None:
        if self.kind not in SESSION_KINDS:
            raise ValueError(f"session kind must be one of {', '.join(SESSION_KINDS)}")
        if not self.lineage:
            self.lineage = self.id

    @property
    def has_payload_hook(self) -> bool:
        """Only an embedded agent can let the runtime edit its provider requests."""
        return self.kind == "embedded"
