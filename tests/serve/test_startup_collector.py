"""`pct serve` pauses the garbage collector during start-up and always turns it back on,
and builds pydantic adapters on first use."""

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


def test_adapters_build_on_first_use_and_validate_the_same(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from pydantic import ConfigDict, TypeAdapter, ValidationError

    monkeypatch.setattr(TypeAdapter, "_defer_build", TypeAdapter.__dict__["_defer_build"])
    startup.defer_adapter_builds()
    startup.defer_adapter_builds()  # twice: wraps once
    adapter = TypeAdapter(int | list[str])
    assert not adapter.pydantic_complete
    assert adapter.validate_python(["a"]) == ["a"]
    assert adapter.pydantic_complete
    with pytest.raises(ValidationError):
        adapter.validate_python({"no": 1})
    # An adapter that asks to be built at once still is.
    assert TypeAdapter(int, config=ConfigDict(defer_build=False)).pydantic_complete
