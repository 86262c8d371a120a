"""`@datarecord`: a dataclass made without `dataclasses`, for the records on the start-up path.

`@dataclass` writes each class's `__init__`, `__eq__`, `__hash__`, `__repr__` and frozen
`__setattr__` as source and compiles it: ~1 ms of CPU per class on a slow box, and the
module imports `inspect` (with `ast`, `dis`, `tokenize`). `pct status` built ~40 of them —
config sections, decisions, rows, models, credentials — for a third of its run. A record
here gets the same methods as one shared function each, set up from the class's
annotations in microseconds; an instance costs a little more to build, which no path
that builds a record notices.

What a record keeps of a dataclass, so callers see no difference: the fields (annotated
class attributes in order, bases first; `ClassVar`s are not fields), defaults and
`field(default_factory=..., compare=..., repr=..., kw_only=...)`, keyword-only fields after
the positional ones, `__post_init__`, equality on the fields of the same class, the hash of
a frozen record, the repr (`Name(a=1, b='x')`), `__match_args__`, and immutability
(`dataclasses.FrozenInstanceError`). `dataclasses.fields`, `replace`, `asdict` and
`is_dataclass` work on records too: `__dataclass_fields__` is built (importing
`dataclasses`) the first time something asks for it. `replace` here does the same without.
"""

from __future__ import annotations

import operator
from collections.abc import Callable
from typing import (
    TYPE_CHECKING,
    Any,
    ClassVar,
    Protocol,
    TypeVar,
    dataclass_transform,
    get_origin,
    overload,
)

if TYPE_CHECKING:
    import dataclasses

_T = TypeVar("_T")
_R = TypeVar("_R")


class _Missing:
    __slots__ = ()

    def __repr__(self) -> str:
        return "MISSING"


_MISSING: Any = _Missing()


class _Field:
    """One field as declared: `field(...)`, or a plain default (or none)."""

    __slots__ = ("compare", "default", "default_factory", "kw_only", "name", "repr", "type")

    def __init__(
        self,
        default: object = _MISSING,
        default_factory: Callable[[], object] | None = None,
        compare: bool = True,
        repr: bool = True,
        kw_only: bool = False,
    ) -> None:
        if default is not _MISSING and default_factory is not None:
            raise ValueError("cannot specify both default and default_factory")
        self.default = default
        self.default_factory = default_factory
        self.compare = compare
        self.repr = repr
        self.kw_only = kw_only
        self.name = ""
        self.type: object = None


@overload
def field(*, default: _T, compare: bool = True, repr: bool = True, kw_only: bool = False) -> _T: ...
@overload
def field(
    *,
    default_factory: Callable[[], _T],
    compare: bool = True,
    repr: bool = True,
    kw_only: bool = False,
) -> _T: ...
@overload
def field(*, compare: bool = True, repr: bool = True, kw_only: bool = False) -> Any: ...
def field(
    *,
    default: Any = _MISSING,
    default_factory: Callable[[], Any] | None = None,
    compare: bool = True,
    repr: bool = True,
    kw_only: bool = False,
) -> Any:
    """`dataclasses.field`, for a record (the options records use)."""
    return _Field(default, default_factory, compare, repr, kw_only)


class _Layout:
    """What the shared methods read of a record class (its `__record__`)."""

    __slots__ = (
        "compared",
        "defaults",
        "factories",
        "fields",
        "frozen",
        "key",
        "names",
        "owner",
        "positional",
        "post_init",
        "reprs",
        "specs",
        "stdlib",
    )

    def __init__(self, owner: type, specs: dict[str, _Field], frozen: bool) -> None:
        self.owner = owner
        self.specs = specs
        self.frozen = frozen
        self.fields = tuple(specs)
        self.names = frozenset(specs)
        # As a dataclass's `__init__`: keyword-only fields come after the positional ones.
        self.positional = tuple(n for n, f in specs.items() if not f.kw_only)
        self.defaults = {n: f.default for n, f in specs.items() if f.default is not _MISSING}
        self.factories = {
            n: f.default_factory for n, f in specs.items() if f.default_factory is not None
        }
        self.compared = tuple(n for n, f in specs.items() if f.compare)
        self.reprs = tuple(n for n, f in specs.items() if f.repr)
        self.post_init = hasattr(owner, "__post_init__")
        self.stdlib: dict[str, dataclasses.Field[Any]] | None = None
        get = operator.attrgetter(*self.compared) if self.compared else None
        if len(self.compared) == 1:
            assert get is not None
            one = get
            self.key: Callable[[object], object] = lambda obj: (one(obj),)
        else:
            self.key = get if get is not None else lambda obj: ()


def _is_classvar(annotation: object) -> bool:
    if isinstance(annotation, str):
        return annotation.startswith(("ClassVar", "typing.ClassVar"))
    return annotation is ClassVar or get_origin(annotation) is ClassVar


def _collect(cls: type) -> dict[str, _Field]:
    """The fields of `cls`: its record bases' (in MRO order), then its own annotations."""
    specs: dict[str, _Field] = {}
    for base in reversed(cls.__mro__[1:]):
        layout = base.__dict__.get("__record__")
        if layout is not None:
            specs.update(layout.specs)
        elif "__dataclass_fields__" in base.__dict__:
            raise TypeError(f"{cls.__qualname__}: a record cannot extend a dataclass")
    # A class's own annotations (since 3.10 a class never reads its base's here), as
    # strings under `from __future__ import annotations`: nothing is evaluated.
    annotations: dict[str, object] = cls.__annotations__
    for name, annotation in annotations.items():
        if _is_classvar(annotation):
            continue
        value = cls.__dict__.get(name, _MISSING)
        spec = value if isinstance(value, _Field) else _Field(default=value)
        if spec.default is not _MISSING and type(spec.default).__hash__ is None:
            raise ValueError(
                f"mutable default {type(spec.default)} for field {name} is not allowed: "
                "use default_factory"
            )
        spec.name, spec.type = name, annotation
        # As dataclasses: the class attribute is the default, or absent with a factory.
        if isinstance(value, _Field):
            if spec.default is _MISSING:
                delattr(cls, name)
            else:
                setattr(cls, name, spec.default)
        specs.pop(name, None)
        specs[name] = spec
    seen_default = False
    for spec in specs.values():
        if spec.kw_only:
            continue
        has_default = spec.default is not _MISSING or spec.default_factory is not None
        if seen_default and not has_default:
            raise TypeError(f"non-default argument {spec.name!r} follows default argument")
        seen_default = seen_default or has_default
    return specs


class _Record(Protocol):
    """What the shared methods see of an instance: its class's layout and its own dict."""

    __record__: _Layout
    __dict__: dict[str, object]


def _init(self: _Record, *args: object, **kwargs: object) -> None:
    layout: _Layout = self.__record__
    name = type(self).__qualname__
    if len(args) > len(layout.positional):
        raise TypeError(
            f"{name}.__init__() takes {len(layout.positional) + 1} positional arguments "
            f"but {len(args) + 1} were given"
        )
    values = dict(zip(layout.positional, args, strict=False))
    for key, value in kwargs.items():
        if key in values:
            raise TypeError(f"{name}.__init__() got multiple values for argument {key!r}")
        if key not in layout.names:
            raise TypeError(f"{name}.__init__() got an unexpected keyword argument {key!r}")
        values[key] = value
    slots = self.__dict__
    missing = []
    for field_name in layout.fields:
        if field_name in values:
            slots[field_name] = values[field_name]
        elif field_name in layout.defaults:
            slots[field_name] = layout.defaults[field_name]
        elif field_name in layout.factories:
            slots[field_name] = layout.factories[field_name]()
        else:
            missing.append(field_name)
    if missing:
        listed = ", ".join(repr(m) for m in missing)
        raise TypeError(f"{name}.__init__() missing {len(missing)} required argument(s): {listed}")
    if layout.post_init:
        self.__post_init__()  # type: ignore[attr-defined]


def _eq(self: _Record, other: object) -> object:
    if other.__class__ is self.__class__:
        key = self.__record__.key
        return bool(key(self) == key(other))  # as dataclasses: tuples of the fields
    return NotImplemented


def _hash(self: _Record) -> int:
    return hash(self.__record__.key(self))


def _repr(self: _Record) -> str:
    fields = ", ".join(f"{n}={getattr(self, n)!r}" for n in self.__record__.reprs)
    return f"{self.__class__.__qualname__}({fields})"


def _frozen_error(name: str) -> Exception:
    import dataclasses

    return dataclasses.FrozenInstanceError(f"cannot assign to field {name!r}")


def _setattr(self: _Record, name: str, value: object) -> None:
    layout: _Layout = self.__record__
    if type(self) is layout.owner or name in layout.names:
        raise _frozen_error(name)
    super(layout.owner, self).__setattr__(name, value)  # type: ignore[arg-type]


def _delattr(self: _Record, name: str) -> None:
    layout: _Layout = self.__record__
    if type(self) is layout.owner or name in layout.names:
        raise _frozen_error(name)
    super(layout.owner, self).__delattr__(name)  # type: ignore[arg-type]


class _DataclassFields:
    """`__dataclass_fields__` on first read: `dataclasses.Field`s of the record's fields,
    so `dataclasses.fields`, `replace`, `asdict` and `is_dataclass` treat it as one."""

    def __get__(self, obj: object, owner: type) -> dict[str, dataclasses.Field[Any]]:
        import dataclasses

        layout: _Layout | None = getattr(owner, "__record__", None)
        if layout is None:
            return {}
        if layout.stdlib is not None:
            return layout.stdlib
        built: dict[str, dataclasses.Field[Any]] = {}
        for name, spec in layout.specs.items():
            options: dict[str, Any] = {
                "compare": spec.compare,
                "repr": spec.repr,
                "kw_only": spec.kw_only,
            }
            if spec.default is not _MISSING:
                options["default"] = spec.default
            if spec.default_factory is not None:
                options["default_factory"] = spec.default_factory
            made: dataclasses.Field[Any] = dataclasses.field(**options)
            made.name, made.type = name, spec.type
            made._field_type = dataclasses._FIELD  # type: ignore[attr-defined]
            built[name] = made
        layout.stdlib = built
        return built


def _setup(cls: type[_T], frozen: bool, repr: bool) -> type[_T]:
    layout = _Layout(cls, _collect(cls), frozen)
    own = cls.__dict__

    def put(name: str, value: object) -> None:
        if name not in own:
            setattr(cls, name, value)

    cls.__record__ = layout  # type: ignore[attr-defined]
    cls.__dataclass_fields__ = _DataclassFields()  # type: ignore[attr-defined]
    put("__init__", _init)
    if repr:
        put("__repr__", _repr)
    put("__eq__", _eq)
    # As dataclasses: a `__hash__` of the class's own stays (a bare `__eq__` sets it None);
    # else a frozen record hashes its compared fields and a mutable one is unhashable.
    class_hash = own.get("__hash__", _MISSING)
    if class_hash is _MISSING or (class_hash is None and "__eq__" in own):
        cls.__hash__ = _hash if frozen else None  # type: ignore[assignment]
    if frozen:
        if "__setattr__" in own or "__delattr__" in own:
            raise TypeError(f"{cls.__qualname__}: a frozen record defines __setattr__")
        cls.__setattr__ = _setattr  # type: ignore[method-assign,assignment]
        cls.__delattr__ = _delattr  # type: ignore[method-assign,assignment]
    put("__match_args__", layout.positional)
    return cls


@overload
def datarecord(cls: type[_T], /) -> type[_T]: ...
@overload
def datarecord(*, frozen: bool = True, repr: bool = True) -> Callable[[type[_T]], type[_T]]: ...
@dataclass_transform(frozen_default=True, field_specifiers=(field,))
def datarecord(
    cls: type[_T] | None = None, /, *, frozen: bool = True, repr: bool = True
) -> type[_T] | Callable[[type[_T]], type[_T]]:
    """`@dataclass(frozen=True)` (or with `frozen=False`, `repr=False`), without dataclasses."""
    if cls is None:
        return lambda cls: _setup(cls, frozen, repr)
    return _setup(cls, frozen, repr)


def replace(obj: _R, /, **changes: Any) -> _R:
    """`dataclasses.replace` for a record, without importing dataclasses."""
    layout: _Layout = obj.__record__  # type: ignore[attr-defined]
    for name in layout.fields:
        if name not in changes:
            changes[name] = obj.__dict__[name]
    return obj.__class__(**changes)
