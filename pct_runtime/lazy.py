"""Package names that load on first use, so importing a package stays cheap.

`pct status` and `pct apply-patch` import packages for one light module each; a package
`__init__` that imported every name it exports would load the whole package with it.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping


def exports(package: str, homes: Mapping[str, str]) -> Callable[[str], object]:
    """A module `__getattr__` for `package`: each name in `homes` is read from its module
    (a full dotted name) on first use and kept in the package, so later reads are plain."""

    def __getattr__(name: str) -> object:
        home = homes.get(name)
        if home is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(home), name)
        setattr(sys.modules[package], name, value)
        return value

    return __getattr__
