"""`NamedTuple` for modules on `pct apply-patch`'s path, without importing `typing`.

`pct apply-patch` is a whole process per patch: `typing` (~4 ms) and its `NamedTuple`
classes (~60 µs each, 20 on that path) cost as much as a tenth of applying a 400-hunk patch
to a 100,000-line file. The type checker sees `typing.NamedTuple` itself; at run time
`class Point(NamedTuple): x: int; y: int = 0` builds the same kind of class — a tuple
subclass with no instance dict, one read-only property per field (`_tuplegetter`, as
`collections.namedtuple` uses), defaults, keyword arguments, `_fields`, `_field_defaults`,
`_replace`, `_asdict`, `_make`, `__match_args__`, the usual repr and pickling — without
`exec` or `typing`. A test holds it to `typing.NamedTuple`'s behaviour.

Field names come from the class body's annotations (kept as strings: every module here
uses `from __future__ import annotations`); only plain one-level subclasses are supported.
"""

from __future__ import annotations

TYPE_CHECKING = False  # `typing.TYPE_CHECKING` without importing typing (mypy takes it as true)
if TYPE_CHECKING:
    from typing import NamedTuple as NamedTuple
else:
    from _collections import _tuplegetter

    def _bind(name: str, fields: tuple, tail: tuple, args: tuple, kwargs: dict) -> tuple:
        """The field values of a call that did not give exactly every field by position."""
        count = len(fields)
        if len(args) > count:
            raise TypeError(
                f"{name}() takes {count} positional arguments but {len(args)} were given"
            )
        first_default = count - len(tail)
        values = list(args)
        for at in range(len(args), count):
            field = fields[at]
            if field in kwargs:
                values.append(kwargs.pop(field))
            elif at >= first_default:
                values.append(tail[at - first_default])
            else:
                raise TypeError(f"{name}() missing required argument: {field!r}")
        if kwargs:
            extra = next(iter(kwargs))
            if extra in fields:
                raise TypeError(f"{name}() got multiple values for argument {extra!r}")
            raise TypeError(f"{name}() got an unexpected keyword argument {extra!r}")
        return tuple(values)

    def _methods(name: str, fields: tuple[str, ...], defaults: dict[str, object]) -> dict:
        count = len(fields)
        tail = tuple(defaults[field] for field in fields[count - len(defaults) :])
        new_tuple = tuple.__new__

        def __new__(cls, *args, **kwargs):
            if kwargs or len(args) != count:
                args = _bind(name, fields, tail, args, kwargs)
            return new_tuple(cls, args)

        def __repr__(self) -> str:
            pairs = zip(fields, self, strict=True)
            return f"{self.__class__.__name__}({', '.join(f'{f}={v!r}' for f, v in pairs)})"

        def _replace(self, **changes):
            values = [changes.pop(f, v) for f, v in zip(fields, self, strict=True)]
            if changes:
                raise ValueError(f"Got unexpected field names: {list(changes)!r}")
            return new_tuple(self.__class__, values)

        def _asdict(self) -> dict:
            return dict(zip(fields, self, strict=True))

        def __getnewargs__(self) -> tuple:
            return tuple(self)

        @classmethod
        def _make(cls, iterable):
            result = new_tuple(cls, iterable)
            if len(result) != count:
                raise TypeError(f"Expected {count} arguments, got {len(result)}")
            return result

        __new__.__qualname__ = f"{name}.__new__"
        return {
            "__new__": __new__,
            "__repr__": __repr__,
            "_replace": _replace,
            "_asdict": _asdict,
            "__getnewargs__": __getnewargs__,
            "_make": _make,
        }

    class _NamedTupleMeta(type):
        def __new__(mcls, name, bases, namespace):
            if namespace.get("_root", False):
                return super().__new__(mcls, name, bases, namespace)
            fields = tuple(namespace.get("__annotations__", {}))
            defaults = {f: namespace.pop(f) for f in fields if f in namespace}
            defaulted = [f in defaults for f in fields]
            if defaulted != sorted(defaulted):
                raise TypeError(f"{name}: a field without a default follows one with it")
            for key, value in _methods(name, fields, defaults).items():
                namespace.setdefault(key, value)
            namespace["__slots__"] = ()
            namespace["_fields"] = fields
            namespace["_field_defaults"] = defaults
            namespace["__match_args__"] = fields
            for index, field in enumerate(fields):
                namespace[field] = _tuplegetter(index, f"Alias for field number {index}")
            # A plain class, as `typing.NamedTuple` makes: subclassing it is ordinary.
            return type(name, (tuple,), namespace)

    class NamedTuple(tuple, metaclass=_NamedTupleMeta):
        """Subclass it with annotated fields, as `typing.NamedTuple` (see the module)."""

        __slots__ = ()
        _root = True
