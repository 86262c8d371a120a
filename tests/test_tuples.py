"""`pct_runtime.tuples.NamedTuple` behaves as `typing.NamedTuple` for what pct uses."""

from __future__ import annotations

import copy
import pickle
import typing

import pytest

from pct_runtime import tuples


class Ours(tuples.NamedTuple):
    """A record."""

    name: str
    line: int
    note: str | None = None

    @property
    def label(self) -> str:
        return f"{self.name}:{self.line}"


class Theirs(typing.NamedTuple):
    """A record."""

    name: str
    line: int
    note: str | None = None

    @property
    def label(self) -> str:
        return f"{self.name}:{self.line}"


@pytest.mark.parametrize("kind", [Ours, Theirs])
def test_behaves_as_a_typing_named_tuple(kind: type[Ours]) -> None:
    value = kind("a", 1)
    assert value == ("a", 1, None) == kind(name="a", line=1) == kind("a", line=1, note=None)
    assert hash(value) == hash(("a", 1, None))
    assert isinstance(value, tuple)
    assert (value.name, value.line, value.note, value.label) == ("a", 1, None, "a:1")
    assert repr(value) == f"{kind.__name__}(name='a', line=1, note=None)"
    assert kind._fields == ("name", "line", "note")
    assert kind._field_defaults == {"note": None}
    assert kind.__match_args__ == ("name", "line", "note")
    assert kind.__doc__ == "A record."
    assert value._replace(note="n") == ("a", 1, "n")
    assert value._asdict() == {"name": "a", "line": 1, "note": None}
    assert kind._make(["b", 2, "c"]) == ("b", 2, "c")
    name, line, note = value
    assert (name, line, note) == ("a", 1, None)
    match value:
        case kind(n, ln):  # type: ignore[misc]
            assert (n, ln) == ("a", 1)
    for copied in (pickle.loads(pickle.dumps(value)), copy.copy(value), copy.deepcopy(value)):
        assert copied == value
        assert type(copied) is kind
    with pytest.raises(AttributeError):
        value.name = "b"  # type: ignore[misc]
    with pytest.raises(AttributeError):
        value.other = 1  # type: ignore[attr-defined]
    with pytest.raises(TypeError):
        kind("a")  # type: ignore[call-arg]
    with pytest.raises(TypeError):
        kind("a", 1, None, 4)  # type: ignore[call-arg]
    with pytest.raises(TypeError):
        kind("a", 1, nope=2)  # type: ignore[call-arg]
    with pytest.raises(TypeError):
        kind("a", 1, name="b")  # type: ignore[misc]
    with pytest.raises(ValueError, match="unexpected field"):
        value._replace(nope=1)  # type: ignore[call-arg]
    assert type(kind) is type  # a plain class: subclassing it is ordinary


def test_a_field_without_default_after_one_with_it_is_refused() -> None:
    with pytest.raises(TypeError):

        class Bad(tuples.NamedTuple):
            first: int = 0
            second: int
