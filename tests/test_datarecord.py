"""A `@datarecord` behaves as the `@dataclass(frozen=True)` it replaces: the config models,
decisions and Pi's records changed from one to the other, and their callers (equality,
`dataclasses.replace`, reprs in messages) must not see it."""

from __future__ import annotations

import copy
import dataclasses
import pickle
from typing import ClassVar

import pytest

from pct_runtime.datarecord import datarecord, field, replace


@datarecord
class Point:
    ORIGIN: ClassVar[str] = "origin"
    x: int
    label: str = "p"
    tags: tuple[str, ...] = ()
    notes: list[str] = field(default_factory=list, compare=False)
    scale: int = field(default=1, kw_only=True)


@dataclasses.dataclass(frozen=True)
class StdPoint:
    ORIGIN: ClassVar[str] = "origin"
    x: int
    label: str = "p"
    tags: tuple[str, ...] = ()
    notes: list[str] = dataclasses.field(default_factory=list, compare=False)
    scale: int = dataclasses.field(default=1, kw_only=True)


class Labelled(Point):
    """Not decorated: inherits the fields and methods, as a dataclass's subclass does."""


@datarecord
class Point3(Point):
    z: int = 0


@datarecord(repr=False)
class Secret:
    name: str
    token: str = field(compare=False)

    def __repr__(self) -> str:
        return f"Secret({self.name!r})"


@datarecord(frozen=False)
class Counter:
    count: int = 0
    seen: set[str] = field(default_factory=set)

    def __post_init__(self) -> None:
        self.count += 1


def test_fields_defaults_and_repr_match_a_dataclass() -> None:
    ours, std = Point(1, notes=["n"]), StdPoint(1, notes=["n"])
    assert repr(ours) == repr(std).replace("StdPoint", "Point")
    assert [f.name for f in dataclasses.fields(ours)] == [f.name for f in dataclasses.fields(std)]
    assert dataclasses.asdict(ours) == dataclasses.asdict(std)
    assert Point.__match_args__ == StdPoint.__match_args__
    assert Point.ORIGIN == "origin"
    assert Point.label == "p"
    assert not hasattr(Point, "notes")  # a factory's field has no class attribute
    assert Point(1).notes is not Point(1).notes


def test_equality_and_hash_follow_the_compared_fields_of_one_class() -> None:
    assert Point(1, notes=["a"]) == Point(1, notes=["b"])  # notes: compare=False
    assert Point(1) != Point(2)
    assert Point(1) != Point(1, scale=2)
    assert Point(1) != Labelled(1)  # another class is never equal, as dataclasses
    assert Point(1) != StdPoint(1)  # type: ignore[comparison-overlap]
    assert hash(Point(1, "a")) == hash(Point(1, "a"))
    assert len({Point(1), Point(1), Point(2)}) == 2
    assert Secret("a", "t1") == Secret("a", "t2")
    assert repr(Secret("a", "t")) == "Secret('a')"


def test_frozen_as_a_dataclass() -> None:
    point = Point(1)
    with pytest.raises(dataclasses.FrozenInstanceError):
        point.x = 2  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        del point.x
    with pytest.raises(dataclasses.FrozenInstanceError):
        point.other = 1  # type: ignore[attr-defined]
    labelled = Labelled(1)
    labelled.extra = 2  # type: ignore[attr-defined]  # a subclass may add non-fields
    with pytest.raises(dataclasses.FrozenInstanceError):
        labelled.x = 3  # type: ignore[misc]


def test_replace_fields_copy_and_pickle() -> None:
    point = Point(1, "a", ("t",), scale=3)
    assert replace(point, x=2) == Point(2, "a", ("t",), scale=3)
    assert dataclasses.replace(point, label="b") == Point(1, "b", ("t",), scale=3)
    assert dataclasses.is_dataclass(point)
    assert dataclasses.is_dataclass(Point)
    assert copy.copy(point) == point
    assert copy.deepcopy(point) == point
    assert pickle.loads(pickle.dumps(point)) == point


def test_inheritance_adds_fields_after_the_base() -> None:
    point = Point3(1, "q", z=5)
    assert [f.name for f in dataclasses.fields(point)] == [
        "x",
        "label",
        "tags",
        "notes",
        "scale",
        "z",
    ]
    assert Point3.__match_args__ == ("x", "label", "tags", "notes", "z")
    assert point.z == 5
    assert point != Point(1, "q")


def test_mutable_record_runs_post_init_and_is_unhashable() -> None:
    counter = Counter()
    assert counter.count == 1
    counter.count = 5
    counter.seen.add("a")
    assert counter == Counter(4, {"a"})  # its __post_init__ counts the build
    with pytest.raises(TypeError):
        hash(counter)


def test_bad_calls_raise_type_errors() -> None:
    with pytest.raises(TypeError, match="missing 1 required argument"):
        Point()  # type: ignore[call-arg]
    with pytest.raises(TypeError, match="positional arguments"):
        Point(1, "a", (), [], 2)  # type: ignore[call-arg]
    with pytest.raises(TypeError, match="unexpected keyword argument 'y'"):
        Point(1, y=2)  # type: ignore[call-arg]
    with pytest.raises(TypeError, match="multiple values"):
        Point(1, x=2)  # type: ignore[misc]


def test_declaration_errors_as_dataclasses() -> None:
    with pytest.raises(ValueError, match="mutable default"):

        @datarecord
        class Bad:
            items: list[str] = []  # noqa: RUF012

    with pytest.raises(TypeError, match="follows default argument"):

        @datarecord
        class Order:
            a: int = 0
            b: int  # type: ignore[misc]
