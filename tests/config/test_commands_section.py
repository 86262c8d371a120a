"""`pct.commands` is validated like every section: the field path and what it must be."""

from __future__ import annotations

import pytest

from pct_runtime.config.commands import CommandRuleFields, CommandsFields, commands_fields
from pct_runtime.config.pct_section import effective_section, known_fields, pct_section_error


def test_defaults_when_absent() -> None:
    assert commands_fields({}) == CommandsFields("allow", ())
    assert known_fields()["commands"] == {"default": "allow", "rules": []}
    assert effective_section({})["commands"] == {"default": "allow", "rules": []}


def test_rules_are_read_in_order() -> None:
    raw = {
        "pct": {
            "commands": {
                "default": "ask",
                "rules": [
                    {"prefix": " git push ", "decision": "deny"},
                    {"prefix": "npm test", "decision": "allow"},
                ],
            }
        }
    }
    assert commands_fields(raw) == CommandsFields(
        "ask", (CommandRuleFields("git push", "deny"), CommandRuleFields("npm test", "allow"))
    )
    assert pct_section_error(raw) is None


@pytest.mark.parametrize(
    ("commands", "message"),
    [
        ("deny", "pct.commands must be an object"),
        ({"default": "block"}, "pct.commands.default must be one of allow, ask, deny"),
        ({"rules": {"prefix": "x"}}, "pct.commands.rules must be a list of rules"),
        ({"rules": ["git push"]}, 'pct.commands.rules[0] must be an object with "prefix"'),
        (
            {"rules": [{"prefix": "ls", "decision": "allow"}, {"prefix": " ", "decision": "ask"}]},
            "pct.commands.rules[1].prefix must be a non-empty command prefix",
        ),
        (
            {"rules": [{"prefix": "git push"}]},
            "pct.commands.rules[0].decision must be one of allow, ask, deny",
        ),
    ],
)
def test_bad_values_name_the_field(commands: object, message: str) -> None:
    error = pct_section_error({"pct": {"commands": commands}})
    assert error is not None
    assert str(error).startswith(message)
