"""Approval of Sky's Computer Use elicitations: strict checks, then Confirm or Always.

Both modes keep every check: the request must belong to the active thread, come from the
injected `node_repl` server, be a form-mode elicitation tagged with connector `computer-use`
and name a non-empty app. Anything foreign or malformed is declined. `Confirm` asks once per
canonical app per client and remembers Yes in memory only (never No); `Always` accepts every
valid request without asking. Neither mode grants macOS permissions.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal

from pct_runtime.host.ui import Answering, Question, UIPort, UIUnavailableError, answering
from pct_runtime.jsontypes import JSONObject

ApprovalMode = Literal["confirm", "always"]
APPROVAL_TITLE = "Computer Use access"
FORM_MODES = frozenset({"form", "openai/form"})

# Reply shapes Sky expects (mirrors the desktop client).
ACCEPT_FRESH: JSONObject = {"action": "accept", "content": {}, "_meta": {"persist": "session"}}
ACCEPT_REMEMBERED: JSONObject = {
    "action": "accept",
    "content": {"source": "computer-use-persisted-state", "scope": "conversation"},
    "_meta": None,
}
DECLINE: JSONObject = {"action": "decline", "content": None, "_meta": None}


@dataclass(frozen=True)
class ValidElicitation:
    """A request that passed every check: its canonical app and Sky's message."""

    app: str
    message: str


def validate_elicitation(params: object, *, thread_id: str | None) -> ValidElicitation | None:
    """The strict checks; None means decline without asking anyone."""
    if thread_id is None or not isinstance(params, Mapping):
        return None
    if params.get("threadId") != thread_id or params.get("serverName") != "node_repl":
        return None
    if params.get("mode") not in FORM_MODES:
        return None
    message = params.get("message")
    meta = params.get("_meta")
    if not isinstance(message, str) or not isinstance(meta, Mapping):
        return None
    if meta.get("connector_id") != "computer-use":
        return None
    tool_params = meta.get("tool_params")
    if not isinstance(tool_params, Mapping):
        return None
    app = tool_params.get("app")
    if not isinstance(app, str) or not app.strip():
        return None
    return ValidElicitation(app=app.strip(), message=message)


@dataclass
class ApprovalOutcome:
    """What happened to one elicitation, so a failed call can say why."""

    reply: JSONObject
    app: str | None = None
    declined_by_user: bool = False
    #: Who was asked and how they answered (a client's automatic "no" is not a person's).
    answer: Answering | None = None
    ui_unavailable: bool = False
    remember: bool = False


class ApprovalMemory:
    """The per-client set of canonical apps approved under `Confirm` (memory only)."""

    def __init__(self) -> None:
        self._apps: set[str] = set()

    def __contains__(self, app: object) -> bool:
        return app in self._apps

    def remember(self, app: str) -> None:
        self._apps.add(app)

    def clear(self) -> None:
        self._apps.clear()

    @property
    def apps(self) -> frozenset[str]:
        return frozenset(self._apps)


async def decide_elicitation(
    valid: ValidElicitation | None,
    *,
    mode: ApprovalMode,
    memory: ApprovalMemory,
    ui: UIPort | None,
) -> ApprovalOutcome:
    """Decline invalid requests; accept under Always; else ask once per app.

    The caller remembers the app (`outcome.remember`) only if the call is still live when the
    answer arrives, so a Yes that lands after a time-out or reset grants nothing.
    """
    if valid is None:
        return ApprovalOutcome(DECLINE)
    if valid.app in memory:
        return ApprovalOutcome(ACCEPT_REMEMBERED, app=valid.app)
    if mode == "always":
        return ApprovalOutcome(ACCEPT_FRESH, app=valid.app, remember=True)
    if ui is None or not ui.available:
        return ApprovalOutcome(DECLINE, app=valid.app, ui_unavailable=True)
    message = valid.message.strip() or f"Allow Computer Use to control {valid.app}?"
    try:
        with answering() as note:
            yes = await ui.confirm(Question(APPROVAL_TITLE, message))
    except UIUnavailableError:
        return ApprovalOutcome(DECLINE, app=valid.app, ui_unavailable=True)
    if not yes:
        return ApprovalOutcome(DECLINE, app=valid.app, declined_by_user=True, answer=note)
    return ApprovalOutcome(ACCEPT_FRESH, app=valid.app, remember=True)
