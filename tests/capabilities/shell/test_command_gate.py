"""The gate: deny refuses, ask goes to whoever can answer, a session answer is remembered
for its prefix, and each decision is journaled with who made it.

The gate judges in `prepare` and the call pipeline asks its question, so these tests run a
tool that prepares through the gate, through the pipeline, with a gate that has no session
around it (the pipeline's approval step is the only place anything is asked).
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from pct_runtime.capabilities.base import (
    CallContext,
    Prepared,
    ToolError,
    ToolResult,
    ToolSpec,
)
from pct_runtime.capabilities.shell.gate import NO, YES_ONCE, CommandGate, yes_for_session
from pct_runtime.capabilities.shell.policy import CommandPolicy, Rule
from pct_runtime.host.ui import NotifyLevel, Question, note_answer
from pct_runtime.jsontypes import JSONMapping
from pct_runtime.runtime.calls import CallPipeline

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


class _Tool:
    """`exec_command`'s shape: `prepare` asks the gate, `execute` records what ran."""

    spec = ToolSpec("exec_command", "Exec Command", "", {"type": "object"})

    def __init__(self, gate: CommandGate) -> None:
        self.gate = gate
        self.ran: list[str] = []

    async def prepare(self, args: JSONMapping, ctx: CallContext) -> Prepared:
        cmd = str(args["cmd"])
        return Prepared(cmd, approval=self.gate.check(cmd, ctx))

    async def execute(self, prepared: Prepared, ctx: CallContext) -> ToolResult:
        self.ran.append(str(prepared.args))
        return ToolResult("ran")


class _Gate:
    """A call outside any session: no journal row of its own, nothing held; it asks."""

    def __init__(self, ctx: CallContext, path: str) -> None:
        self.path = path
        self._ctx = ctx

    def trace(self, name: str, args: Any) -> None:
        return None

    def context(self, trace: Any) -> CallContext:
        return self._ctx

    def admit(self, name: str) -> None:
        return None

    def recheck(self, name: str) -> None:
        return None

    def running(self, name: str, ctx: CallContext) -> Any:
        return contextlib.nullcontext()

    @contextlib.asynccontextmanager
    async def hold(self, tool: Any, prepared: Any) -> AsyncIterator[None]:
        yield

    def asks(self, name: str, approval: Any) -> bool:
        return True

    def asking(self, name: str, note: Any) -> Any:
        return contextlib.nullcontext()

    def unavailable(self, name: str) -> str:
        raise AssertionError("the command policy words its own refusal")

    def denied(self, name: str, note: Any) -> str:
        raise AssertionError("the command policy words its own refusal")

    def executing(self) -> None:
        return None

    def settled(self) -> None:
        return None


class Run:
    """Commands run through the pipeline over one gate (one session's)."""

    def __init__(self, gate: CommandGate | None = None) -> None:
        self.tool = _Tool(gate or CommandGate(lambda: POLICY))
        self.pipeline = CallPipeline({"exec_command": self.tool})

    async def __call__(self, cmd: str, ctx: CallContext) -> ToolResult:
        gate: Any = _Gate(ctx, ctx.path)
        return await self.pipeline.call("exec_command", {"cmd": cmd}, gate)


async def test_allowed_lines_pass_silently() -> None:
    rows, run = Rows(), Run()
    await run("echo git push", _ctx(rows=rows))
    assert rows.rows == []
    assert run.tool.ran == ["echo git push"]


async def test_deny_names_the_rule_and_is_journaled() -> None:
    rows, run = Rows(), Run()
    with pytest.raises(ToolError) as caught:
        await run("cd x && git push", _ctx(Person(), rows))
    assert caught.value.code == "command-denied"
    assert caught.value.message == (
        'Command denied by the command policy: rule "git push" (deny). Nothing ran. Do not '
        "try another spelling of this command; ask the user if it is needed."
    )
    assert rows.rows[0]["code"] == "command-denied"
    assert "by: policy" in str(rows.rows[0]["text"])
    assert run.tool.ran == []


async def test_ask_without_a_person_is_unavailable() -> None:
    rows, run = Rows(), Run()
    with pytest.raises(ToolError) as caught:
        await run("curl x", _ctx(rows=rows))
    assert caught.value.code == "approval-unavailable"
    assert 'rule "curl" (ask)' in caught.value.message
    assert "by: nobody" in str(rows.rows[0]["text"])
    assert run.tool.ran == []


async def test_the_question_marks_the_matched_part() -> None:
    person = Person(YES_ONCE)
    await Run()("cd x && curl -s y", _ctx(person))
    question = person.asked[0]
    assert "cd x && ⟦curl⟧ -s y" in question.title
    assert question.options == (YES_ONCE, yes_for_session("curl"), NO)


async def test_yes_once_asks_again_and_session_remembers_the_prefix() -> None:
    rows, run = Rows(), Run()
    person = Person(YES_ONCE, yes_for_session("curl"))
    await run("curl a", _ctx(person, rows))
    await run("curl b", _ctx(person, rows))
    await run("curl c", _ctx(person, rows))  # not asked again
    assert len(person.asked) == 2
    texts = [str(row["text"]) for row in rows.rows]
    assert "by: console: yes once" in texts[0]
    assert "by: console: yes for this session" in texts[1]
    assert "by: session approval" in texts[2]
    assert run.tool.ran == ["curl a", "curl b", "curl c"]


async def test_a_session_answer_holds_for_nested_calls_too() -> None:
    run = Run()
    await run("curl a", _ctx(Person(yes_for_session("curl"))))
    nested = _ctx(Person())  # would fail if asked: it has no answers
    nested.path = "nested"
    await run("curl b", nested)
    assert run.tool.ran == ["curl a", "curl b"]


@pytest.mark.parametrize("answer", [NO, None])
async def test_no_or_dismissed_refuses(answer: str | None) -> None:
    rows, run = Rows(), Run()
    with pytest.raises(ToolError) as caught:
        await run("curl x", _ctx(Person(answer), rows))
    assert caught.value.code == "approval-denied"
    assert "The user declined this command" in caught.value.message
    assert rows.rows[0]["code"] == "approval-denied"
    assert run.tool.ran == []


async def test_the_policy_is_read_at_each_call() -> None:
    current = [POLICY]
    run = Run(CommandGate(lambda: current[0]))
    current[0] = CommandPolicy("allow")
    await run("git push", _ctx())
    assert run.tool.ran == ["git push"]


def test_the_approval_says_it_is_the_command_policys() -> None:
    approval = CommandGate(lambda: POLICY).check("curl x", _ctx())
    assert approval is not None
    assert approval.kind == "command-policy"
