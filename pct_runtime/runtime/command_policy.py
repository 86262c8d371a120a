"""The command policy's judge for the runtime's callers (the console's preview), so a
caller that must not import a capability still asks exactly what `exec_command` asks."""

from __future__ import annotations

from pct_runtime.capabilities.shell.gate import marked, policy_of
from pct_runtime.capabilities.shell.policy import Verdict, explain, judge
from pct_runtime.config.commands import CommandsFields


def preview(line: str, fields: CommandsFields) -> tuple[Verdict, str, str]:
    """What `line` would get under `fields`: the verdict, the line with the matched part
    between ⟦ and ⟧, and one sentence saying why."""
    verdict = judge(line, policy_of(fields))
    return verdict, marked(line, verdict), explain(verdict)


__all__ = ["Verdict", "explain", "judge", "marked", "policy_of", "preview"]
