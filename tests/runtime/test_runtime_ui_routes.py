"""The approval route order: console → the session's own port → none, and a console that
goes away mid-question hands it to the next route instead of failing the call."""

from __future__ import annotations

import pytest

from pct_runtime.host.ui import (
    AskedDiff,
    NotifyLevel,
    Question,
    UIRouteLostError,
    UIUnavailableError,
    answering,
)
from pct_runtime.runtime.ui import RoutedUI


class Port:
    def __init__(self, answer: bool | None, *, available: bool = True) -> None:
        self.answer = answer  # None: the person went away
        self.available = available
        self.asked: list[str] = []
        self.sessions: list[str | None] = []
        self.questions: list[Question] = []

    async def confirm(self, question: Question) -> bool:
        self.asked.append(question.title)
        self.sessions.append(question.session_id)
        self.questions.append(question)
        if self.answer is None:
            raise UIRouteLostError("gone")
        return self.answer

    async def select(self, question: Question) -> str | None:
        if self.answer is None:
            raise UIRouteLostError("gone")
        return question.options[0] if self.answer else None

    def notify(self, message: str, level: NotifyLevel = "info") -> None:
        return None


async def test_the_console_answers_first() -> None:
    console, own = Port(True), Port(False)
    ui = RoutedUI(lambda: console, own, session_id="s1")
    assert ui.transport == "console"
    assert await ui.confirm(Question("Apply?"))
    assert (console.asked, own.asked, console.sessions) == (["Apply?"], [], ["s1"])


async def test_a_console_that_leaves_hands_the_question_to_the_next_route() -> None:
    console, own = Port(None), Port(True)
    ui = RoutedUI(lambda: console, own, session_id="s1")
    assert await ui.confirm(Question("Apply?")) is True
    assert (console.asked, own.asked, own.sessions) == (["Apply?"], ["Apply?"], ["s1"])
    assert await ui.select(Question("Pick", options=("a", "b"))) == "a"


async def test_with_no_route_left_the_call_is_unavailable() -> None:
    ui = RoutedUI(lambda: Port(None), Port(None))  # a fresh console port at every look
    with pytest.raises(UIUnavailableError):
        await ui.confirm(Question("Apply?"))
    ui = RoutedUI(lambda: None, Port(True, available=False))
    with pytest.raises(UIUnavailableError):
        await ui.confirm(Question("Apply?"))
    assert RoutedUI(lambda: None, None).transport == "unavailable"


async def test_the_answer_note_names_the_route_that_answered() -> None:
    """The asking capability words a "no" by who gave it: the route noted last is the one
    that answered, after a console that left."""
    own = Port(False)
    own.transport_name = "elicitation"  # type: ignore[attr-defined]
    with answering() as note:
        assert await RoutedUI(lambda: Port(True), own).confirm(Question("Apply?")) is True
    assert note.route == "console"
    gone = Port(None)
    with answering() as note:
        assert await RoutedUI(lambda: gone, own).confirm(Question("Apply?")) is False
    assert note.route == "elicitation"
    with answering() as note, pytest.raises(UIUnavailableError):
        await RoutedUI(lambda: None, None).confirm(Question("Apply?"))
    assert note.route == "unavailable"


async def test_every_route_gets_the_question_with_its_diffs_and_who_asks() -> None:
    """The diffs travel as a field of the question (no context variable), and the router
    signs it with the session and its client — for the console and for the next route
    after a console that left alike."""

    class Own(Port):
        client_name = "codex-mcp-client"

    diff = AskedDiff("a.txt", "--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-a\n+b")
    gone, own = Port(None), Own(True)
    ui = RoutedUI(lambda: gone, own, session_id="s1")
    assert await ui.confirm(Question("Apply?", "patch", diffs=(diff,))) is True
    for port in (gone, own):
        (asked,) = port.questions
        assert asked == Question(
            "Apply?", "patch", diffs=(diff,), session_id="s1", client="codex-mcp-client"
        )
