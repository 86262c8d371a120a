"""The shipped Lark grammar (`grammar.lark`) and an LALR parser built from it.

The grammar is what grammar-capable clients constrain sampling with; the hand-written parser
in `parser.py` is what we execute (it names each problem). Both accept the same language
apart from the cross-section path conflicts a context-free grammar cannot express; tests
hold them to that.
"""

from __future__ import annotations

from functools import lru_cache
from importlib import resources
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from lark import Lark


@lru_cache(maxsize=1)
def grammar_text() -> str:
    """The grammar file shipped inside the package."""
    return (
        resources.files("pct_runtime.capabilities.apply_patch")
        .joinpath("grammar.lark")
        .read_text("utf-8")
    )


@lru_cache(maxsize=1)
def lark_parser() -> Lark:
    """An LALR parser for the grammar (imported lazily: lark is not needed to apply patches)."""
    from lark import Lark

    return Lark(grammar_text(), parser="lalr", start="start")


def lark_accepts(patch: str) -> bool:
    """True when the grammar accepts `patch` as a whole."""
    from lark.exceptions import LarkError

    try:
        lark_parser().parse(patch)
    except LarkError:
        return False
    return True
