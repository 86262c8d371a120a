"""Differential test against the real Codex binary (`codex --codex-run-as-apply-patch PATCH`).

On patches both accept, the resulting trees must be identical except for the documented,
deliberate difference: a missing final newline is preserved (Codex adds one to every file it
rewrites). (Codex 0.171 also keeps CRLF and the file's text of fuzzy-matched context lines, so
those are compared as equal; v0.125.0 did neither.)
Patches only one side accepts (our stricter grammar, no overwrites, ambiguity refused; or our
stacked '@@' locators, which Codex rejects) are not compared, except the deliberate
differences in `DELIBERATE`, where Codex is silently wrong (toolkit.md 3.9: a locator moves
the cursor after it; a pure addition needs an anchor): each runs through both and must still
differ the documented way, so a Codex release that changes the behaviour is noticed.
"""

from __future__ import annotations

import subprocess
import tempfile
from dataclasses import dataclass, replace
from pathlib import Path

import pytest
from apply_patch_generators import FileSpec, build_tree, tree_and_patch
from apply_patch_helpers import codex_binary, envelope
from hypothesis import HealthCheck, assume, given, settings

from pct_runtime.capabilities.apply_patch.errors import ApplyPatchError
from pct_runtime.capabilities.apply_patch.executor import apply_patch_text

CODEX = codex_binary()
pytestmark = pytest.mark.skipif(
    CODEX is None,
    reason="the Codex CLI is not installed (npm install @openai/codex; looked in "
    "$PCT_NODE_BIN, <repo>/node_modules/.bin and PATH)",
)


def files_of(root: Path) -> dict[str, bytes | None]:
    return {
        p.relative_to(root).as_posix(): (p.read_bytes() if p.is_file() else None)
        for p in sorted(root.rglob("*"))
    }


def run_both(
    tree: dict[str, bytes], patch: str
) -> tuple[dict[str, bytes | None], dict[str, bytes | None]] | None:
    """Apply with both; None unless both accepted."""
    assert CODEX is not None
    with tempfile.TemporaryDirectory() as tmp:
        ours, theirs = Path(tmp) / "ours", Path(tmp) / "codex"
        for root in (ours, theirs):
            root.mkdir()
            for rel, data in tree.items():
                (root / rel).parent.mkdir(parents=True, exist_ok=True)
                (root / rel).write_bytes(data)
        try:
            apply_patch_text(patch, ours)
            ours_ok = True
        except ApplyPatchError:
            ours_ok = False
        done = subprocess.run(
            [CODEX, "--codex-run-as-apply-patch", patch],
            cwd=theirs,
            capture_output=True,
            timeout=60,
        )
        if not (ours_ok and done.returncode == 0):
            return None
        return files_of(ours), files_of(theirs)


def same_modulo_final_newline(
    ours: dict[str, bytes | None], theirs: dict[str, bytes | None], tree: dict[str, bytes]
) -> None:
    """Equal, except that where a source lacked a final newline Codex adds one and we don't
    (our last line may itself be empty, so ours can still end in a line break)."""
    unterminated = any(data and not data.endswith(b"\n") for data in tree.values())
    assert ours.keys() == theirs.keys()
    for rel, mine in ours.items():
        other = theirs[rel]
        if mine is None or other is None:
            assert mine == other, rel
        elif unterminated and mine and other in (mine + b"\n", mine + b"\r\n"):
            continue  # deliberate: we keep a missing final newline
        else:
            assert mine == other, rel


CASES: list[tuple[dict[str, bytes], str]] = [
    ({}, envelope("*** Add File: nested/new.txt", "+created", "+")),
    (
        {"modify.txt": b"line1\nline2\nline3\n", "delete.txt": b"x\n"},
        envelope(
            "*** Delete File: delete.txt",
            "*** Update File: modify.txt",
            "@@",
            " line1",
            "-line2",
            "+changed",
        ),
    ),
    (
        {"m.txt": b"a\nb\nc\nd\ne\nf\n"},
        envelope("*** Update File: m.txt", "@@", "-b", "+B", "@@", " e", "-f", "+F"),
    ),
    (
        {"p.py": b"class A:\n    x = 1\nclass B:\n    x = 1\n"},
        envelope("*** Update File: p.py", "@@ class B:", "-    x = 1", "+    x = 2"),
    ),
    (
        {"t.txt": b"end\nmid\nend\n"},
        envelope("*** Update File: t.txt", "@@", "-end", "+END", "*** End of File"),
    ),
    (
        {"q.txt": "say(\u201chi\u201d) \u2014 ok\nold\n".encode()},
        envelope("*** Update File: q.txt", "@@", ' say("hi") - ok', "-old", "+new"),
    ),
    (
        {"r.txt": b"x\r\ny\r\nz\r\n"},
        envelope("*** Update File: r.txt", "@@", " y", "-z", "+Z", "+W", "*** End of File"),
    ),
    (
        {"s.txt": b"  a\n\tb\n"},
        envelope("*** Update File: s.txt", "@@", "-a", "+A", " b"),
    ),
    (
        {"old/name.txt": b"old content\n"},
        envelope(
            "*** Update File: old/name.txt",
            "*** Move to: new/dir/name.txt",
            "@@",
            "-old content",
            "+new content",
        ),
    ),
    ({"w.txt": b"keep\nx\n"}, envelope("*** Update File: w.txt", "@@", " keep", "-x", "+y", "")),
    ({"c.txt": b"a\r\nb\r\nc\r\n"}, envelope("*** Update File: c.txt", "@@", " a", "-b", "+B")),
    ({"i.txt": b"a\nb\n"}, envelope("*** Update File: i.txt", "+c", "+d", "*** End of File")),
    ({"i.txt": b"a\nb\nc\n"}, envelope("*** Update File: i.txt", "@@ c", "+x")),
    ({"n.txt": b"a\nb"}, envelope("*** Update File: n.txt", "@@", "-a", "+z")),
    ({"n.txt": b"a\nb"}, envelope("*** Update File: n.txt", "@@", " b", "+c", "+")),
    (
        {"u.txt": "na\u00efve caf\u00e9\n\u2603\n".encode()},
        envelope("*** Update File: u.txt", "@@", " na\u00efve caf\u00e9", "-\u2603", "+\u2705"),
    ),
]


@dataclass(frozen=True)
class Difference:
    """A patch where pct deliberately differs from Codex: `ours` is our resulting tree, or
    None for a rejection starting with `refusal`; `codex` is Codex's tree (None: refused)."""

    why: str
    tree: dict[str, bytes]
    patch: str
    ours: dict[str, bytes] | None
    codex: dict[str, bytes] | None
    refusal: str = ""


DELIBERATE: list[Difference] = [
    Difference(
        "a Move without hunks is a pure rename (any bytes, mode kept); Codex refuses it as an "
        "empty update, so a model would have to re-send the whole file to rename it",
        {"old.bin": b"\xff\x00raw"},
        envelope("*** Update File: old.bin", "*** Move to: new/name.bin"),
        {"new/name.bin": b"\xff\x00raw"},
        None,
    ),
    Difference(
        "a pure addition after '@@ <locator>' goes right after the locator's line; Codex "
        "appends it at the end of the file, far from where the model meant",
        {"p.py": b"def a():\n    pass\ndef b():\n    pass\n"},
        envelope("*** Update File: p.py", "@@ def a():", "+    # doc"),
        {"p.py": b"def a():\n    # doc\n    pass\ndef b():\n    pass\n"},
        {"p.py": b"def a():\n    pass\ndef b():\n    pass\n    # doc\n"},
    ),
    Difference(
        "a pure addition with neither a locator nor '*** End of File' says nothing about where "
        "it goes; Codex silently appends it at the end of the file",
        {"i.txt": b"a\nb\n"},
        envelope("*** Update File: i.txt", "@@", "+c"),
        None,
        {"i.txt": b"a\nb\nc\n"},
        "Invalid patch hunk on line 3: The hunk for 'i.txt' only adds lines ('+') and nothing "
        "says where they go. Anchor it:",
    ),
    Difference(
        "a hunk with only context lines changes nothing, which is never what the model meant; "
        "Codex applies it as a no-op and reports success",
        {"c.txt": b"a\nb\n"},
        envelope("*** Update File: c.txt", "@@", " a", " b"),
        None,
        {"c.txt": b"a\nb\n"},
        "Invalid patch hunk on line 3: The hunk for 'c.txt' has only context lines (' ') and "
        "no '+' or '-' line, so it would change nothing.",
    ),
]


def run_each(tree: dict[str, bytes], patch: str) -> tuple[object, object]:
    """Apply with each side separately: (our tree or error text, Codex's tree or None)."""
    assert CODEX is not None
    with tempfile.TemporaryDirectory() as tmp:
        ours, theirs = Path(tmp) / "ours", Path(tmp) / "codex"
        for root in (ours, theirs):
            root.mkdir()
            for rel, data in tree.items():
                (root / rel).parent.mkdir(parents=True, exist_ok=True)
                (root / rel).write_bytes(data)
        before = files_of(ours)
        mine: object
        try:
            apply_patch_text(patch, ours)
            mine = {k: v for k, v in files_of(ours).items() if v is not None}
        except ApplyPatchError as exc:
            assert files_of(ours) == before, "a rejection must change nothing"
            mine = str(exc)
        done = subprocess.run(
            [CODEX, "--codex-run-as-apply-patch", patch],
            cwd=theirs,
            capture_output=True,
            timeout=60,
        )
        other = {k: v for k, v in files_of(theirs).items() if v is not None}
        return mine, (other if done.returncode == 0 else None)


@pytest.mark.parametrize("case", DELIBERATE, ids=lambda c: c.why.split(";")[0][:48])
def test_deliberate_differences_from_codex(case: Difference) -> None:
    mine, theirs = run_each(case.tree, case.patch)
    if case.ours is None:
        assert isinstance(mine, str), case.why
        assert mine.startswith(case.refusal), mine
        assert mine.endswith("Nothing was changed.")
    else:
        assert mine == case.ours, case.why
    assert theirs == case.codex, case.why


@pytest.mark.parametrize(("tree", "patch"), CASES)
def test_same_result_as_codex(tree: dict[str, bytes], patch: str) -> None:
    both = run_both(tree, patch)
    assert both is not None, "both implementations should accept this patch"
    same_modulo_final_newline(*both, tree)


def test_fuzzy_context_keeps_source_text_like_codex() -> None:
    tree = {"f.txt": b"  keep  \nold\n"}
    both = run_both(tree, envelope("*** Update File: f.txt", "@@", " keep", "-old", "+new"))
    assert both is not None
    ours, theirs = both
    assert ours["f.txt"] == b"  keep  \nnew\n"
    same_modulo_final_newline(ours, theirs, tree)


@pytest.mark.slow
@settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)
@given(case=tree_and_patch())
def test_random_valid_patches_match_codex(case: tuple[dict[str, FileSpec], str, str]) -> None:
    files, forward, _ = case
    # Codex does not match through a BOM; the patch does not depend on it, so drop it.
    files = {rel: replace(spec, bom=False) for rel, spec in files.items()}
    assume(forward.count("\n") > 2)  # an empty patch is refused by both
    with tempfile.TemporaryDirectory() as tmp:
        root, _ = build_tree(Path(tmp), files, [])
        tree = {k: v for k, v in files_of(root).items() if v is not None}
    both = run_both(tree, forward)
    assert both is not None, forward
    same_modulo_final_newline(*both, tree)
