"""The approval route order: console → the session's own port → none, and a console that
goes away mid-question hands it to the next route instead of failing the call."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from pct_runtime.host.ui import (
    ASKER,
    NotifyLevel,
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

    async def confirm(self, title: str, message: str) -> bool:
        self.asked.append(title)
        asker = ASKER.get()
        self.sessions.append(asker.session_id if asker else None)
        if self.answer is None:
            raise UIRouteLostError("gone")
        return self.answer

    async def select(self, title: str, options: Sequence[str]) -> str | None:
        if self.answer is None:
            raise UIRouteLostError("gone")
        return options[0] if self.answer else None

    def notify(self, message: str, level: NotifyLevel = "info") -> None:
        return None


async def test_the_console_answers_first() -> None:
    console, own = Port(True), Port(False)
    ui = RoutedUI(lambda: console, own, session_id="s1")
    assert ui.transport == "console"
    assert await ui.confirm("Apply?", "")
    assert (console.asked, own.asked, console.sessions) == (["Apply?"], [], ["s1"])


async def test_a_console_that_leaves_hands_the_question_to_the_next_route() -> None:
    console, own = Port(None), Port(True)
    ui = RoutedUI(lambda: console, own, session_id="s1")
    assert await ui.confirm("Apply?", "") is True
    assert (console.asked, own.asked, own.sessions) == (["Apply?"], ["Apply?"], ["s1"])
    assert await ui.select("Pick", ["a", "b"]) == "a"


async def test_with_no_route_left_the_call_is_unavailable() -> None:
    ui = RoutedUI(lambda: Port(None), Port(None))  # a fresh console port at every look
    with pytest.raises(UIUnavailableError):
        await ui.confirm("Apply?", "")
    ui = RoutedUI(lambda: None, Port(True, available=False))
    with pytest.raises(UIUnavailableError):
        await ui.confirm("Apply?", "")
    assert RoutedUI(lambda: None, None).transport == "unavailable"


async def test_the_answer_note_names_the_route_that_answered() -> None:
    """The asking capability words a "no" by who gave it: the route noted last is the one
    that answered, after a console that left."""
    own = Port(False)
    own.transport_name = "elicitation"  # type: ignore[attr-defined]
    with answering() as note:
        assert await RoutedUI(lambda: Port(True), own).confirm("Apply?", "") is True
    assert note.route == "console"
    gone = Port(None)
    with answering() as note:
        assert await RoutedUI(lambda: gone, own).confirm("Apply?", "") is False
    assert note.route == "elicitation"
    with answering() as note, pytest.raises(UIUnavailableError):
        await RoutedUI(lambda: None, None).confirm("Apply?", "")
    assert note.route == "unavailable"
