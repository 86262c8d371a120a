"""Comments and docstrings state rules in plain words: a reader of the repository cannot open a
`§` of a document outside it, an issue number, or an untranslated spec heading, so none may
stand in for the rule. `scripts/arch_metrics.py` finds them (its `citations`) and prints the
count; string literals that are not docstrings are product text and are never read."""

from __future__ import annotations

from pathlib import Path

from tests.arch import metrics as _metrics

ROOT = Path(__file__).resolve().parent.parent


def test_no_comment_or_docstring_cites_a_place_a_reader_cannot_open() -> None:
    found = _metrics().package_citations()
    assert found == {}, "\n".join(
        f"{file}:{line}: {excerpt} (say the rule itself instead)"
        for file, hits in found.items()
        for line, excerpt in hits
    )


_SAMPLE = '''"""A module (toolkit.md \u00a73.6)."""
import os

#: Exact refusals (issue 19).
LIMIT = 8
"""An attribute docstring: spec \u8c03\u7528 hook."""

PRODUCT = "\u8c03\u7528 hook \u00a7 issue 19 is a product string, not a comment"


def f() -> str:
    """Plain words."""
    x = "Issue 7 in a message"  # a clean comment
    return x  # see Issues #12
'''


def test_the_check_reads_comments_and_docstrings_only() -> None:
    """The check can fail: each kind of citation is caught where it is a comment or a
    docstring, and the same text in a product string literal is left alone."""
    hits = _metrics().citations(_SAMPLE)
    assert [line for line, _ in hits] == [1, 4, 6, 14]
    assert "toolkit.md" in hits[0][1]
    assert "issue 19" in hits[1][1]
    assert "hook" in hits[2][1]
    assert "Issues #12" in hits[3][1]


def test_a_multi_line_docstring_is_reported_at_its_line() -> None:
    source = 'def g() -> None:\n    """First line.\n\n    Then (issue 3).\n    """\n'
    assert _metrics().citations(source) == [(4, "Then (issue 3).")]
