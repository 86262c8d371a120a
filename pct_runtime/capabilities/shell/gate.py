"""The command policy's gate: one check `exec_command` makes before anything runs.

`deny` refuses with `command-denied`; `ask` hands the call pipeline an `Approval`, which it
asks the way a nested patch is asked (the console, else the client's MCP elicitation, else
`approval-unavailable`) on every path, showing the command with the matched part marked;
a "for this session" answer is remembered for that rule's prefix. Each asked or denied
command is journaled with the decision and who made it. Only what starts is judged:
`write_stdin` input never passes here.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from pct_runtime.capabilities.base import Approval, CallContext, ToolError
from pct_runtime.capabilities.shell.policy import (
    DECISIONS,
    CommandPolicy,
    Decision,
    Rule,
    Verdict,
    judge,
)
from pct_runtime.config.commands import CommandsFields
from pct_runtime.host.ui import Answering
from pct_runtime.jsontypes import JSONObject

YES_ONCE = "Yes, once"
NO = "No"
#: How many characters of a command line a question shows.
SHOWN_CHARS = 600


def yes_for_session(prefix: str) -> str:
    return f"Yes, and for this session: {prefix}"


def policy_of(fields: CommandsFields) -> CommandPolicy:
    """The judge's policy for the file's `pct.commands` fields."""
    rules = tuple(Rule(rule.prefix, _decision(rule.decision)) for rule in fields.rules)
    return CommandPolicy(_decision(fields.default), rules)


def _decision(value: str) -> Decision:
    # The section's validation admits only these three; anything else is asked about.
    for decision in DECISIONS:
        if value == decision:
            return decision
    return "ask"


def marked(command: str, verdict: Verdict) -> str:
    """The command line with the part the verdict is about between ⟦ and ⟧."""
    if verdict.span is None:
        return command
    start, end = verdict.span
    return f"{command[:start]}⟦{command[start:end]}⟧{command[end:]}"


def _what(verdict: Verdict) -> str:
    if verdict.rule is not None:
        return f'rule "{verdict.rule.prefix}" ({verdict.rule.decision})'
    if verdict.command is not None and verdict.command.unknown:
        return f"pct cannot tell what runs: {verdict.command.reason}"
    return f"no rule matches; the default is {verdict.decision}"


def denied_text(verdict: Verdict) -> str:
    return (
        f"Command denied by the command policy: {_what(verdict)}. Nothing ran. Do not try "
        "another spelling of this command; ask the user if it is needed."
    )


def unavailable_text(verdict: Verdict) -> str:
    return (
        f"This command needs the user's approval ({_what(verdict)}), but no interactive UI can "
        "ask in this session. Nothing ran. Ask the user to open the pct console (pct-tui) or "
        "to change pct.commands, then retry."
    )


def declined_text(verdict: Verdict, note: Answering) -> str:
    settled = "Nothing ran; do not retry it or another spelling of it without asking the user."
    if note.route == "elicitation":
        return note.client_refusal(
            "the approval request for this command",
            later="Nothing ran. Ask the user to open the pct console (pct-tui), then retry.",
            settled=settled,
        )
    return f"The user declined this command ({_what(verdict)}). {settled}"


def _details(verdict: Verdict, by: str) -> JSONObject:
    details: JSONObject = {"decision": verdict.decision, "by": by}
    if verdict.rule is not None:
        details["rule"] = {"prefix": verdict.rule.prefix, "decision": verdict.rule.decision}
    if verdict.command is not None and verdict.command.words:
        details["command"] = " ".join(verdict.command.words)
    return details


def _journal(ctx: CallContext, command: str, details: JSONObject, code: str | None) -> None:
    """One journal row under the call: the decision and who made it."""
    if ctx.observer is None:
        return
    row = ctx.observer.start("command-policy", {"cmd": command}, cell_id=ctx.cell_id)
    parts = [f"decision: {details['decision']}", f"by: {details['by']}"]
    rule = details.get("rule")
    if isinstance(rule, dict):
        parts.append(f'rule: "{rule["prefix"]}" ({rule["decision"]})')
    if "command" in details:
        parts.append(f"command: {details['command']}")
    text = "; ".join(parts)
    row.finish(outcome="error" if code else "ok", error_code=code, text=text)


@dataclass
class CommandGate:
    """One session's gate: the current policy and the prefixes approved for the session."""

    policy: Callable[[], CommandPolicy]
    approved: set[str] = field(default_factory=set)

    def check(self, command: str, ctx: CallContext) -> Approval | None:
        """None when `command` may start; the question to ask when the policy asks; raises
        the model-facing `ToolError` when it denies. `exec_command`'s `prepare` calls it,
        so the call pipeline asks the question on every path."""
        verdict = judge(command, self.policy())
        if verdict.decision == "allow":
            return None
        if verdict.decision == "deny":
            details = _details(verdict, "policy")
            _journal(ctx, command, details, "command-denied")
            raise ToolError("command-denied", denied_text(verdict), {"commandPolicy": details})
        if verdict.rule is not None and verdict.rule.prefix in self.approved:
            _journal(ctx, command, _details(verdict, "session approval"), None)
            return None
        shown = marked(command, verdict)
        if len(shown) > SHOWN_CHARS:
            shown = shown[:SHOWN_CHARS] + "…"
        return Approval(
            f"Run this command? {shown}",
            f"Command policy: {_what(verdict)}. The part it is about is between ⟦ and ⟧.",
            kind="command-policy",
            answers=_Answers(self, command, verdict, ctx),
        )


@dataclass(frozen=True)
class _Answers:
    """How the command policy's question settles, each outcome journaled with who decided."""

    gate: CommandGate
    command: str
    verdict: Verdict
    ctx: CallContext

    @property
    def options(self) -> tuple[str, ...]:
        rule = self.verdict.rule
        return (YES_ONCE, yes_for_session(rule.prefix), NO) if rule else (YES_ONCE, NO)

    def _journal(self, by: str, code: str | None) -> JSONObject:
        details = _details(self.verdict, by)
        _journal(self.ctx, self.command, details, code)
        return details

    def unavailable(self) -> ToolError:
        self._journal("nobody", "approval-unavailable")
        return ToolError("approval-unavailable", unavailable_text(self.verdict))

    def answered(self, answer: str | None, note: Answering) -> None:
        who = note.route or "unknown"
        rule = self.verdict.rule
        if answer == YES_ONCE:
            self._journal(f"{who}: yes once", None)
            return
        if rule is not None and answer == yes_for_session(rule.prefix):
            self.gate.approved.add(rule.prefix)
            self._journal(f"{who}: yes for this session", None)
            return
        details = self._journal(f"{who}: no", "approval-denied")
        raise ToolError(
            "approval-denied",
            declined_text(self.verdict, note),
            {"commandPolicy": details, "approval": note.to_details()},
        )
