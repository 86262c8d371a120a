"""`pct serve` pauses the garbage collector during start-up and always turns it back on."""

from __future__ import annotations

import gc
from collections.abc import Iterator

import pytest

from pct_runtime.serve import startup


@pytest.fixture(autouse=True)
def collector_on() -> Iterator[None]:
    gc.enable()
    yield
    startup.resume_collector()
    gc.enable()


def test_paused_during_the_handler_and_on_again_after_it() -> None:
    seen: list[bool] = []

    @startup.paused_during_startup
    def handler() -> int:
        seen.append(gc.isenabled())
        return 7

    assert handler() == 7
    assert seen == [False]
    assert gc.isenabled()


def test_a_refused_start_up_turns_it_back_on() -> None:
    @startup.paused_during_startup
    def handler() -> int:
        raise RuntimeError("refused")

    with pytest.raises(RuntimeError, match="refused"):
        handler()
    assert gc.isenabled()


def test_serving_resumes_it_once_before_the_handler_ends() -> None:
    seen: list[bool] = []

    @startup.paused_during_startup
    def handler() -> None:
        startup.resume_collector()  # as serve_stdio does before its first request
        seen.append(gc.isenabled())
        gc.disable()  # something later turns it off on purpose: not undone at the end
        startup.resume_collector()
        seen.append(gc.isenabled())

    handler()
    assert seen == [True, False]
    assert not gc.isenabled()


def test_a_collector_already_off_is_left_off() -> None:
    gc.disable()

    @startup.paused_during_startup
    def handler() -> None:
        startup.resume_collector()

    handler()
    assert not gc.isenabled()
