"""Matcher: tiers, first tier decides, ambiguity, locators, End of File, the empty-line retry."""

from __future__ import annotations

import pytest

from pct_runtime.capabilities.apply_patch.errors import MatchError
from pct_runtime.capabilities.apply_patch.matcher import Key, LineMatcher, apply_chunks
from pct_runtime.capabilities.apply_patch.parser import UpdateFile, parse_patch
from pct_runtime.capabilities.apply_patch.source import Source, load_source


def source_of(lines: list[str]) -> Source:
    return load_source("".join(line + "\n" for line in lines).encode(), "f.txt", "update", 2)


def offset(lines: list[str], index: int) -> int:
    """Byte offset where line `index` starts in `source_of(lines)`."""
    return sum(len(line.encode()) + 1 for line in lines[:index])


def run(source: list[str], *hunk_lines: str) -> list[str]:
    patch = parse_patch(
        "\n".join(["*** Begin Patch", "*** Update File: f.txt", *hunk_lines, "*** End Patch"])
    )
    op = patch.operations[0]
    assert isinstance(op, UpdateFile)
    buffer = source_of(source)
    edits = apply_chunks(buffer, op.chunks, "f.txt")
    text = b"".join(bytes(piece) for piece in buffer.rewrite(edits)).decode()
    return text.split("\n")[:-1]


def test_exact_tier() -> None:
    assert run(["a", "b", "c"], "@@", " a", "-b", "+B", " c") == ["a", "B", "c"]


def test_trailing_whitespace_tier_keeps_the_source_context() -> None:
    assert run(["a  ", "b\t", "c"], "@@", " a", "-b", "+B") == ["a  ", "B", "c"]


def test_trimmed_tier_keeps_the_source_indentation_of_context() -> None:
    source = ["    if x:", "        y()", "    z()"]
    assert run(source, "@@", " if x:", "-    y()", "+        w()") == [
        "    if x:",
        "        w()",
        "    z()",
    ]


def test_unicode_punctuation_tier() -> None:
    source = ["say(\u201chello\u201d) \u2014 it\u2019s", "x\u00a0=\u00a01"]
    assert run(source, "@@", ' say("hello") - it\'s', "-x = 1", "+x = 2") == [
        source[0],
        "x = 2",
    ]


def test_first_tier_with_a_candidate_decides_even_far_away() -> None:
    # A trailing-whitespace candidate near the cursor loses to an exact one further down.
    source = ["x  ", "filler", "x"]
    assert run(source, "@@", "-x", "+y") == ["x  ", "filler", "y"]


def test_two_candidates_in_the_deciding_tier_are_ambiguous() -> None:
    with pytest.raises(MatchError) as info:
        run(["x", "a", "x"], "@@", "-x", "+y")
    assert str(info.value) == (
        "Cannot update 'f.txt': ambiguous context: the hunk at patch line 3 matches more "
        "than one place (file lines 1 and 3, exact). Add context lines, or an '@@' locator "
        "naming the enclosing function or class, so it matches exactly one place. Nothing was "
        "changed."
    )


def test_ambiguity_is_reported_in_fuzzy_tiers_too() -> None:
    with pytest.raises(MatchError, match=r"file lines 1 and 2, ignoring trailing whitespace"):
        run(["x ", "x\t"], "-x", "+y")


def test_locator_moves_the_cursor_and_stacked_locators_narrow() -> None:
    source = ["class A", "  def m", "    x", "class B", "  def m", "    x"]
    out = run(source, "@@ class B", "@@   def m", "-    x", "+    y")
    assert out == [*source[:5], "    y"]


def test_locator_not_found_text() -> None:
    with pytest.raises(MatchError) as info:
        run(["a"], "@@ def nowhere():", " a", "+b")
    assert str(info.value) == (
        "Cannot update 'f.txt': the locator '@@ def nowhere():' on patch line 3 was not found "
        "in the file. After '@@ ' write the exact text of one line of the file (such as the "
        "enclosing function or class header), or use a bare '@@'. Nothing was changed."
    )


def test_locator_ambiguous_text() -> None:
    with pytest.raises(MatchError) as info:
        run(["def f():", "x", "def f():", "y"], "@@ def f():", "-y", "+z")
    assert str(info.value) == (
        "Cannot update 'f.txt': ambiguous context: the locator '@@ def f():' on patch line 3 "
        "matches more than one line (file lines 1 and 3, exact). Use a more specific locator, "
        "or add a second '@@' line to narrow it down. Nothing was changed."
    )


def test_hunk_not_found_text_lists_expected_lines() -> None:
    with pytest.raises(MatchError) as info:
        run(["a", "b"], "@@", " a", "-missing")
    assert str(info.value) == (
        "Cannot update 'f.txt': the hunk at patch line 3 does not match the file. Re-read the "
        "file and make the context (' ') and removed ('-') lines match it exactly. Nothing was "
        "changed. Expected lines:\na\nmissing"
    )


def test_later_hunks_search_forward_from_the_cursor() -> None:
    source = ["a", "x", "b", "x"]
    assert run(source, "@@", " a", "-x", "+y", "@@", " b", "-x", "+z") == ["a", "y", "b", "z"]
    with pytest.raises(MatchError) as info:
        run(["p", "q", "r"], "@@", "-r", "+R", "@@", "-p", "+P")
    assert "at or after line 4 (after the previous hunk)" in str(info.value)


def test_end_of_file_only_matches_the_last_window() -> None:
    source = ["end", "mid", "end"]
    assert run(source, "@@", "-end", "+END", "*** End of File") == ["end", "mid", "END"]
    with pytest.raises(MatchError) as info:
        run(["a", "b"], "@@", "-a", "+A", "*** End of File")
    assert "does not match the file at the end of the file" in str(info.value)


def test_trailing_empty_old_line_is_retried_without_it() -> None:
    # The model closed the hunk with a bare empty line the file does not have.
    assert run(["a", "b"], "@@", " a", "-b", "+c", "") == ["a", "c"]


def test_trailing_empty_line_is_kept_when_the_file_has_it() -> None:
    assert run(["a", "", "z"], "@@", "-a", "+A", "") == ["A", "", "z"]


def test_the_retry_never_reduces_to_an_empty_pattern() -> None:
    with pytest.raises(MatchError):
        run(["a"], "@@", "", "+x")


def test_pure_addition_after_a_locator_goes_right_after_its_line() -> None:
    # Codex appends it at the end of the file; the toolkit moves the cursor after a locator.
    assert run(["a", "b", "c"], "@@ a", "+x", "+y") == ["a", "x", "y", "b", "c"]
    assert run(["k", "a", "k", "b"], "@@ a", "@@ k", "+x") == ["k", "a", "k", "x", "b"]
    # After an earlier hunk: inserted before a later hunk that starts on the next line.
    assert run(["a", "b", "c"], "@@ a", "+x", "@@", "-b", "+B") == ["a", "x", "B", "c"]
    assert run(["a", "b"], "@@ b", "+c") == ["a", "b", "c"]


def test_pure_addition_with_end_of_file_goes_to_the_end() -> None:
    assert run(["a", "b"], "@@", "+c", "*** End of File") == ["a", "b", "c"]
    assert run(["a", ""], "+c", "*** End of File") == ["a", "", "c"]
    assert run(["a", "b"], "@@ a", "+c", "*** End of File") == ["a", "b", "c"]
    assert run([], "@@", "+c", "*** End of File") == ["c"]


def test_index_only_visits_positions_after_the_cursor() -> None:
    lines = [f"line {i}" for i in range(1000)] + ["dup", "dup"]
    at = {i: offset(lines, i) for i in (500, 501, 1000, 1001)}
    matcher = LineMatcher(source_of(lines), ["line 500", "dup"])
    assert matcher.find(["line 500"], 0, at_end=False) == (0, [at[500]])
    assert matcher.find(["line 500"], at[501], at_end=False) == (-1, [])
    assert matcher.find(["dup"], at[1001], at_end=False) == (0, [at[1001]])
    assert matcher.find(["dup"], 0, at_end=False) == (0, [at[1000], at[1001]])


def test_work_is_linear_no_rescan_per_hunk(monkeypatch: pytest.MonkeyPatch) -> None:
    # Count work instead of timing it: one index pass per tier used, and a bounded number of
    # window checks per hunk however large the file is.
    lines = [f"row {i}" for i in range(20_000)]
    hunks: list[str] = []
    for k in range(200):
        at = k * 100 + 50
        hunks += ["@@", f" row {at - 1}", f"-row {at}", f"+new {at}", f" row {at + 1}"]
    windows = {"n": 0}
    passes = {"n": 0}
    real_window = LineMatcher._window_matches
    real_index = LineMatcher._index

    def count_window(self: LineMatcher, tier: int, keys: list[Key], start: int) -> bool:
        windows["n"] += 1
        return real_window(self, tier, keys, start)

    def count_index(self: LineMatcher, tier: int) -> dict[Key, int | list[int]]:
        if self._tiers[tier].index is None:
            passes["n"] += 1
        return real_index(self, tier)

    monkeypatch.setattr(LineMatcher, "_window_matches", count_window)
    monkeypatch.setattr(LineMatcher, "_index", count_index)
    out = run(lines, *hunks)
    assert out[50] == "new 50"
    assert passes["n"] == 1
    assert windows["n"] == 200


@pytest.mark.parametrize("eol", [b"\n", b"\r\n"])
def test_exact_windows_at_an_unterminated_last_line(eol: bytes) -> None:
    """The exact tier compares a window as one run of bytes: a window ending at a last line
    without its line ending still matches (and only there), in either line-ending style."""
    data = eol.join([b"a", b"b", b"c", b"a", b"b"])  # no final line ending
    source = load_source(data, "f.txt", "update", 2)
    matcher = LineMatcher(source, ["a", "b"])
    keys = matcher.keys(0, ["a", "b"])
    assert matcher.find(["a", "b"], source.start, at_end=False) == (0, [0, 3 * (1 + len(eol))])
    assert matcher._window_matches(0, keys, 3 * (1 + len(eol)))
    assert not matcher._window_matches(0, keys, 1 + len(eol))  # "b", "c"
    assert not matcher._window_matches(0, matcher.keys(0, ["b"]), 0)


def test_exact_window_is_line_by_line() -> None:
    """A window's bytes are compared end to end, but a line can never stand for two."""
    source = source_of(["a", "b"])
    matcher = LineMatcher(source, [])
    assert not matcher._window_matches(0, [b"a\nb\n"], 0)  # one key, two lines
    assert matcher._window_matches(0, [b"a\n", b"b\n"], 0)
