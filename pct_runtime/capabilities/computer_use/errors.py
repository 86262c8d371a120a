"""Computer Use failures and their model-facing texts.

Every text tells the model what to do next. After a desktop action was dispatched and its
outcome is unknown (time-out, app-server exit, cancellation, an unreadable reply) nothing is
retried: the model is told to inspect the app with `computer_use_get_app_state` first.
"""

from __future__ import annotations

from typing import Literal

from pct_runtime.capabilities.base import ToolError
from pct_runtime.host.ui import Answering

ClientErrorCategory = Literal[
    "timeout",
    "process-exit",
    "aborted",
    "invalid-response",
    "app-server-error",
    "mcp-error",
    "node-repl-unavailable",
    "incompatible-sky-target",
    "inspection-required",
    "approval-declined",
    "approval-unavailable",
    "closed",
]

INSPECT_HINT = (
    " The action was dispatched and may or may not have happened; it was not retried. "
    "Call computer_use_get_app_state for this app before another action."
)
TARGET_HINT = (
    " If the target app was not resolved, call computer_use_list_apps and use a returned app "
    "identifier; PIDs, window ids and bare executable paths are not supported targets."
)

_BASE: dict[str, str] = {
    "timeout": "Computer Use timed out.",
    "process-exit": "The Computer Use app-server exited.",
    "aborted": "Computer Use was cancelled.",
    "invalid-response": "Computer Use returned an invalid response.",
    "app-server-error": "The Computer Use app-server rejected the request.",
    "mcp-error": "Computer Use failed.",
    "node-repl-unavailable": (
        "Computer Use is unavailable: the bundled node_repl did not start "
        "(node-repl-unavailable). Do not retry now; ask the user to check the ChatGPT app."
    ),
    "incompatible-sky-target": (
        "Computer Use is unavailable: @oai/sky does not report target mac "
        "(incompatible-sky-target)."
    ),
    "inspection-required": (
        "The previous desktop action may have completed; it was not retried. Call "
        "computer_use_get_app_state for the app before another action."
    ),
    "approval-declined": (
        "Computer Use access was not approved. Nothing was done; do not retry without asking "
        "the user."
    ),
    "approval-unavailable": (
        "Computer Use access needs the user's confirmation, but no interactive UI is available. "
        "Nothing was done. Ask the user to open the pct console (pct-tui) to answer it, or to "
        "set Computer Use approval to Always, then retry."
    ),
    "closed": "Computer Use is closed for this session.",
}


def error_text(category: ClientErrorCategory, *, unknown_outcome: bool, detail: str = "") -> str:
    if category == "mcp-error":
        head = f"Computer Use failed: {detail}" if detail else "Computer Use failed."
        if detail and not head.endswith((".", "!", "?", "…")):
            head += "."
        return head + TARGET_HINT
    if category == "app-server-error" and detail:
        text = f"The Computer Use app-server rejected the request: {detail}"
        if not text.endswith((".", "!", "?", "…")):
            text += "."
    elif category in ("approval-declined", "approval-unavailable") and detail:
        text = _BASE[category].replace("Computer Use access", f"Computer Use access to {detail}")
    else:
        text = _BASE[category]
    return text + INSPECT_HINT if unknown_outcome else text


class ComputerUseClientError(ToolError):
    """A client failure; `code` is the category, `unknown_outcome` marks a dispatched action."""

    def __init__(
        self,
        category: ClientErrorCategory,
        *,
        unknown_outcome: bool = False,
        detail: str = "",
        text: str | None = None,
    ) -> None:
        super().__init__(
            category,
            text or error_text(category, unknown_outcome=unknown_outcome, detail=detail),
            {"category": category, "unknown_outcome": unknown_outcome},
        )
        self.category: ClientErrorCategory = category
        self.unknown_outcome = unknown_outcome


def declined_text(app: str, note: Answering | None) -> str:
    """The refusal of a Computer Use access question: who said no, as far as pct can tell.

    MCP clients answer `decline` both for a person and for themselves (`codex exec` has no
    one to ask, and declines in about 2 ms), so only an answer too fast for any person says
    that nobody was asked; then the model is told how a person can be reached instead.
    """
    target = f"Computer Use access to {app}" if app else "Computer Use access"
    request = f"the request for {target}"
    later = (
        "Nothing was done. Ask the user to open the pct console (pct-tui) to answer it, or to "
        "set Computer Use approval to Always, then retry."
    )
    if note is None or note.route not in ("console", "elicitation"):
        return f"{target} was not approved. Nothing was done; do not retry without asking the user."
    if note.route == "console":
        return (
            f"The user declined {target} in the pct console. Nothing was done; do not retry "
            "without asking the user."
        )
    return note.client_refusal(
        request,
        later=later,
        settled="Nothing was done; do not retry without asking the user.",
    )


def declined_error(app: str, note: Answering | None) -> ComputerUseClientError:
    """`approval-declined` (the code stays), worded by who declined."""
    error = ComputerUseClientError("approval-declined", detail=app, text=declined_text(app, note))
    if note is not None:
        error.details["approval"] = note.to_details()
    return error
