"""The capability registry's decide-layer table: one row per capability, in status order.

Status and the runtime's refusals iterate this table instead of naming capabilities (issue
17 item 3; see docs/ARCHITECTURE.md, "How to add a capability"). A row is plain data — the
decision key (also the config section), the title, the tool names it owns, its exact
refusal texts and the rows its status block prints after `configured`/`effective` — so
layers above decide read it without importing a capability package.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from pct_runtime.decide.decisions import DASH, Decision
from pct_runtime.host import names

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


@dataclass(frozen=True)
class CapabilityRow:
    """One capability as decide and status see it."""

    key: str
    title: str
    status_rows: StatusRows
    #: The tool names this capability owns (none for a hook-only capability).
    tools: tuple[str, ...] = ()
    #: Exact model-facing refusal of a call to one of `tools` while inactive (toolkit.md §3.6).
    refusal: str = ""
    #: When set, an `unavailable` decision with a reason is refused as `f"{prefix}{reason}."`.
    unavailable_prefix: str | None = None


def _web_search(d: Decision, no_model: bool) -> list[str]:
    return [
        f"  requested backend: {d.requested_backend}",
        f"  effective backend: {d.effective_backend}",
        f"  web search executor: {d.executor}",
        f"  web search executor effort: {d.executor_effort}",
        f"  reason: {d.reason}",
        SIDECAR_NOTE,
    ]


def _compaction(d: Decision, no_model: bool) -> list[str]:
    return [f"  reason: {d.reason}", REMOTE_NOTE]


def _image(d: Decision, no_model: bool) -> list[str]:
    return [f"  backend: {d.backend or DASH}", f"  reason: {d.reason}"]


def _apply_patch(d: Decision, no_model: bool) -> list[str]:
    return [f"  reason: {rule_reason(d, no_model)}"]


def _computer_use(d: Decision, no_model: bool) -> list[str]:
    return [f"  transport: {d.transport or DASH}", f"  reason: {d.reason}", COMPUTER_USE_NOTE]


def _shell(d: Decision, no_model: bool) -> list[str]:
    return [f"  reason: {rule_reason(d, no_model)}", SHELL_NOTE]


def _code(d: Decision, no_model: bool) -> list[str]:
    return [f"  reason: {rule_reason(d, no_model)}", CODE_NOTE]


def _discovery(d: Decision, no_model: bool) -> list[str]:
    return [
        f"  reason: {d.reason}",
        f"  managed deferred tools: {d.managed or 0}",
        f"  loaded this session: {d.loaded or 0}",
        DISCOVERY_NOTE,
    ]


#: Every capability, in the order `/pct status` prints its block (reference/toolkit.md §3.3).
CAPABILITIES: tuple[CapabilityRow, ...] = (
    CapabilityRow(
        "web_search",
        "Web Search",
        _web_search,
        (names.WEB_SEARCH_TOOL,),
        "OpenAI Web Search is not active for the current model.",
        "OpenAI Web Search is unavailable: ",
    ),
    CapabilityRow("remote_compaction", "Remote Compaction", _compaction),
    CapabilityRow(
        "image_generation",
        "Image Generation",
        _image,
        (names.IMAGE_GENERATION_TOOL,),
        "OpenAI Image Generation is not active for the current model.",
        "OpenAI Image Generation is unavailable: ",
    ),
    CapabilityRow(
        "apply_patch",
        "Apply Patch",
        _apply_patch,
        (names.APPLY_PATCH_TOOL,),
        "Apply Patch is not enabled.",
    ),
    CapabilityRow(
        "computer_use",
        "Computer Use",
        _computer_use,
        names.COMPUTER_USE_TOOLS,
        "Computer Use is not active for the current session.",
    ),
    CapabilityRow(
        "shell_sessions",
        "Shell Sessions",
        _shell,
        names.SHELL_TOOLS,
        "Shell Sessions are not enabled.",
    ),
    CapabilityRow(
        "code_mode", "Code Mode", _code, names.CODE_MODE_TOOLS, "Code Mode is not enabled."
    ),
    CapabilityRow(
        "tool_discovery",
        "Tool Discovery",
        _discovery,
        (names.FIND_TOOLS_TOOL,),
        "Tool discovery is not enabled.",
    ),
)

#: The rows by decision key (the runtime's bindings take their tool names from here).
BY_KEY: dict[str, CapabilityRow] = {row.key: row for row in CAPABILITIES}
