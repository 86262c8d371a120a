"""Each capability's `/pct status` block lines after `configured`/`effective`.

The registry (`registry.py`) gives every row one of these; `status.py` prints them. The
notes are fixed lines, the same words every time, so a reader (or a script) can match them.
"""

from __future__ import annotations

from collections.abc import Callable

from pct_runtime.decide.decisions import DASH, Decision

#: A rule-managed tool that is off only because no model is known reports this reason.
NO_MODEL_REASON = "current-model-missing"

SIDECAR_NOTE = "  Sidecar uses a separate OpenAI request with additional latency and cost."
REMOTE_NOTE = (
    "  active is structural only; refreshed OAuth account compatibility is checked per attempt."
)
COMPUTER_USE_NOTE = "  experimental local bridge through ChatGPT.app node_repl and @oai/sky."
SHELL_NOTE = "  local pipes only; no TTY; commands launch once and are never replayed."
CODE_NOTE = (
    "  nested calls dispatch only declared adapters; per-call tool hooks and third-party "
    "permission interceptors do not see them."
)
DISCOVERY_NOTE = (
    "  only explicitly managed Toolkit-owned tools can be loaded; discovery never enables "
    "a disabled capability or grants permission."
)


def rule_reason(decision: Decision, no_model: bool) -> str:
    """A rule-managed tool that is off only because no model is known says so."""
    if no_model and not decision.reason and decision.effective == "off":
        return NO_MODEL_REASON
    return decision.reason


#: (decision, no model known under execution rules) -> the block's lines after its head.
StatusRows = Callable[[Decision, bool], list[str]]


def web_search_rows(d: Decision, no_model: bool) -> list[str]:
    return [
        f"  requested backend: {d.requested_backend}",
        f"  effective backend: {d.effective_backend}",
        f"  web search executor: {d.executor}",
        f"  web search executor effort: {d.executor_effort}",
        f"  reason: {d.reason}",
        SIDECAR_NOTE,
    ]


def compaction_rows(d: Decision, no_model: bool) -> list[str]:
    return [f"  reason: {d.reason}", REMOTE_NOTE]


def image_rows(d: Decision, no_model: bool) -> list[str]:
    return [f"  backend: {d.backend or DASH}", f"  reason: {d.reason}"]


def apply_patch_rows(d: Decision, no_model: bool) -> list[str]:
    return [f"  reason: {rule_reason(d, no_model)}"]


def computer_use_rows(d: Decision, no_model: bool) -> list[str]:
    return [f"  transport: {d.transport or DASH}", f"  reason: {d.reason}", COMPUTER_USE_NOTE]


def shell_rows(d: Decision, no_model: bool) -> list[str]:
    return [f"  reason: {rule_reason(d, no_model)}", SHELL_NOTE]


def code_rows(d: Decision, no_model: bool) -> list[str]:
    return [f"  reason: {rule_reason(d, no_model)}", CODE_NOTE]


def discovery_rows(d: Decision, no_model: bool) -> list[str]:
    return [
        f"  reason: {d.reason}",
        f"  managed deferred tools: {d.managed or 0}",
        f"  loaded this session: {d.loaded or 0}",
        DISCOVERY_NOTE,
    ]
