"""The gate: deny refuses, ask goes to whoever can answer, a session answer is remembered
for its prefix, and each decision is journaled with who made it."""

from __future__ import annotations

from pathlib import Path

import pytest

from pct_runtime.capabilities.base import CallContext, ToolError
from pct_runtime.capabilities.shell.gate import NO, YES_ONCE, CommandGate, yes_for_session
from pct_runtime.capabilities.shell.policy import CommandPolicy, Rule
from pct_runtime.host.ui import NotifyLevel, Question, note_answer
from pct_runtime.jsontypes import JSONMapping

POLICY = CommandPolicy("allow", (Rule("git push", "deny"), Rule("curl", "ask")))


class Person:
    """A UI port that answers each select with the next scripted answer."""

    def __init__(self, *answers: str | None) -> None:
        self.answers = list(answers)
        self.asked: list[Question] = []

    @property
    def available(self) -> bool:
        return True

    async def confirm(self, question: Question) -> bool:
        raise AssertionError("the gate asks with a select")

    async def select(self, question: Question) -> str | None:
        note_answer(route="console")
        self.asked.append(question)
        return self.answers.pop(0)

    def notify(self, message: str, level: NotifyLevel = "info") -> None:
        return None


class Rows:
    """A journal observer that keeps the rows it was given."""

    def __init__(self) -> None:
        self.rows: list[dict[str, object]] = []

    def start(self, tool: str, args: JSONMapping, *, cell_id: str | None) -> Rows:
        self.rows.append({"tool": tool, "cmd": args.get("cmd")})
        return self

    @property
    def patch_witness(self) -> None:
        return None

    def nested(self) -> Rows:
        return self

    def finish(
        self,
        *,
        outcome: str,
        error_code: str | None = None,
        text: str = "",
        details: JSONMapping | None = None,
    ) -> None:
        self.rows[-1].update(outcome=outcome, code=error_code, text=text)


def _ctx(ui: Person | None = None, rows: Rows | None = None) -> CallContext:
    ctx = CallContext(cwd=Path("/"), observer=rows)
    if ui is not None:
        ctx.ui = ui
    return ctx


async def test_allowed_lines_pass_silently() -> None:
    rows = Rows()
    await CommandGate(lambda: POLICY).check("echo git push", _ctx(rows=rows))
    assert rows.rows == []


async def test_deny_names_the_rule_and_is_journaled() -> None:
    rows = Rows()
    with pytest.raises(ToolError) as caught:
        await CommandGate(lambda: POLICY).check("cd x && git push", _ctx(rows=rows))
    assert caught.value.code == "command-denied"
    assert caught.value.message == (
        'Command denied by the command policy: rule "git push" (deny). Nothing ran. Do not '
        "try another spelling of this command; ask the user if it is needed."
    )
    assert rows.rows[0]["code"] == "command-denied"
    assert "by: policy" in str(rows.rows[0]["text"])


async def test_ask_without_a_person_is_unavailable() -> None:
    with pytest.raises(ToolError) as caught:
        await CommandGate(lambda: POLICY).check("curl x", _ctx())
    assert caught.value.code == "approval-unavailable"
    assert 'rule "curl" (ask)' in caught.value.message


async def test_the_question_marks_the_matched_part() -> None:
    person = Person(YES_ONCE)
    await CommandGate(lambda: POLICY).check("cd x && curl -s y", _ctx(person))
    question = person.asked[0]
    assert "cd x && ⟦curl⟧ -s y" in question.title
    assert question.options == (YES_ONCE, yes_for_session("curl"), NO)


async def test_yes_once_asks_again_and_session_remembers_the_prefix() -> None:
    rows = Rows()
    person = Person(YES_ONCE, yes_for_session("curl"))
    gate = CommandGate(lambda: POLICY)
    await gate.check("curl a", _ctx(person, rows))
    await gate.check("curl b", _ctx(person, rows))
    await gate.check("curl c", _ctx(person, rows))  # not asked again
    assert len(person.asked) == 2
    texts = [str(row["text"]) for row in rows.rows]
    assert "by: console: yes once" in texts[0]
    assert "by: console: yes for this session" in texts[1]
    assert "by: session approval" in texts[2]


@pytest.mark.parametrize("answer", [NO, None])
async def test_no_or_dismissed_refuses(answer: str | None) -> None:
    rows = Rows()
    with pytest.raises(ToolError) as caught:
        await CommandGate(lambda: POLICY).check("curl x", _ctx(Person(answer), rows))
    assert caught.value.code == "approval-denied"
    assert "The user declined this command" in caught.value.message
    assert rows.rows[0]["code"] == "approval-denied"


async def test_the_policy_is_read_at_each_call() -> None:
    current = [POLICY]
    gate = CommandGate(lambda: current[0])
    current[0] = CommandPolicy("allow")
    await gate.check("git push", _ctx())
