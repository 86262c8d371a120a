"""`pct.commands`: the command policy's default and rules, as the file states them.

Parsed here, below everything, with the same `<field> must <requirement>` text as every
section, so `pct reload`, `pct status`, the console and `pct serve` report a bad rule the
same way. The shell capability turns the fields into its judge's policy.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from pct_runtime.config.pct_section_base import PctSettingError, subsection
from pct_runtime.datarecord import datarecord
from pct_runtime.jsontypes import JSONMapping, JSONObject

COMMAND_DECISIONS: tuple[str, ...] = ("allow", "ask", "deny")
DEFAULT_COMMAND_DECISION = "allow"


class CommandsConfigError(PctSettingError):
    """`pct.commands` has a value pct cannot use."""


# Records, not dataclasses: `pct apply-patch` reads the pct section through the journal's
# settings, and importing dataclasses costs more than the apply itself (a NamedTuple class,
# built with `exec`, costs about as much as the record module).
@datarecord
class CommandRuleFields:
    prefix: str
    decision: str


@datarecord
class CommandsFields:
    default: str = DEFAULT_COMMAND_DECISION
    rules: tuple[CommandRuleFields, ...] = ()


_DECISION_TEXT = "be one of allow, ask, deny"


def _decision(value: object, path: str) -> str:
    if not isinstance(value, str) or value not in COMMAND_DECISIONS:
        raise CommandsConfigError(path, _DECISION_TEXT)
    return value


def commands_fields(raw: JSONMapping) -> CommandsFields:
    """`pct.commands` of a raw document (defaults for what it leaves out)."""
    section = subsection(raw, "commands", CommandsConfigError)
    if section is None:
        return CommandsFields()
    default = _decision(section.get("default", DEFAULT_COMMAND_DECISION), "pct.commands.default")
    rules_raw = section.get("rules", [])
    if isinstance(rules_raw, str) or not isinstance(rules_raw, Sequence):
        raise CommandsConfigError("pct.commands.rules", "be a list of rules")
    rules: list[CommandRuleFields] = []
    for index, item in enumerate(rules_raw):
        path = f"pct.commands.rules[{index}]"
        if not isinstance(item, Mapping):
            raise CommandsConfigError(path, 'be an object with "prefix" and "decision"')
        prefix = item.get("prefix")
        if not isinstance(prefix, str) or not prefix.strip():
            raise CommandsConfigError(f"{path}.prefix", "be a non-empty command prefix")
        decision = _decision(item.get("decision"), f"{path}.decision")
        rules.append(CommandRuleFields(prefix.strip(), decision))
    return CommandsFields(default, tuple(rules))


def commands_in(raw: JSONMapping) -> CommandsFields:
    """The fields of a document the store accepted; the defaults when it holds none (a
    store that fell back to its all-off defaults after a failed read)."""
    try:
        return commands_fields(raw)
    except PctSettingError:
        return CommandsFields()


def commands_document(fields: CommandsFields) -> JSONObject:
    """The fields as the file stores them (the console saves its edits through this)."""
    return {
        "default": fields.default,
        "rules": [{"prefix": r.prefix, "decision": r.decision} for r in fields.rules],
    }
