"""Codex's upstream scenario fixtures, run through our executor.

Where the spec deliberately refuses a Codex leniency, the test asserts our rejection and an
untouched tree instead of Codex's expected tree, and says why.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from pct_runtime.capabilities.apply_patch.errors import ApplyPatchError
from pct_runtime.capabilities.apply_patch.executor import apply_patch_text

_REPO = Path(__file__).resolve().parents[3]
SCENARIOS = _REPO.parent / "shared" / "data" / "codex-apply-patch-scenarios"
if not SCENARIOS.is_dir():  # pragma: no cover - the shared data lives outside the repo
    pytest.skip(f"Codex scenario fixtures not found at {SCENARIOS}", allow_module_level=True)

# scenario -> (why we differ, the start of our rejection text)
DELIBERATE: dict[str, tuple[str, str]] = {
    "010_move_overwrites_existing_destination": (
        "a Move never overwrites an existing destination (Codex overwrites it)",
        "Cannot move 'old/name.txt' to 'renamed/dir/name.txt' (patch line 3): a file already",
    ),
    "011_add_overwrites_existing_file": (
        "Add File is strict: it never overwrites an existing file (Codex overwrites it)",
        "Cannot add 'duplicate.txt' (patch line 2): a file already exists there.",
    ),
    "015_failure_after_partial_success_leaves_changes": (
        "the whole patch is preflighted, so a predictable failure changes nothing (Codex's CLI "
        "commits the Add before failing)",
        "Cannot update 'missing.txt' (patch line 4): the file does not exist.",
    ),
    "016_pure_addition_update_chunk": (
        "a pure addition needs an anchor ('@@ <line>' or '*** End of File'); Codex appends it "
        "at the end of the file whatever the model meant",
        "Invalid patch hunk on line 3: The hunk for 'input.txt' only adds lines ('+') and "
        "nothing says where they go.",
    ),
    "017_whitespace_padded_hunk_header": (
        "headers must be exact; padded headers are refused (Codex trims them)",
        "Invalid patch hunk on line 2: '  *** Update File: foo.txt' is not a valid hunk header.",
    ),
    "018_whitespace_padded_patch_markers": (
        "first and last lines must be exactly the markers (Codex trims them)",
        "Invalid patch: The first line of the patch must be '*** Begin Patch'",
    ),
    "020_whitespace_padded_patch_marker_lines": (
        "first and last lines must be exactly the markers (Codex trims them)",
        "Invalid patch: The first line of the patch must be '*** Begin Patch'",
    ),
}


def tree(root: Path) -> dict[str, bytes | None]:
    if not root.is_dir():
        return {}
    return {
        p.relative_to(root).as_posix(): (p.read_bytes() if p.is_file() else None)
        for p in sorted(root.rglob("*"))
    }


@pytest.mark.parametrize(
    "name", sorted(p.name for p in SCENARIOS.iterdir() if p.is_dir()) if SCENARIOS.is_dir() else []
)
def test_codex_scenario(name: str, tmp_path: Path) -> None:
    scenario = SCENARIOS / name
    if (scenario / "input").is_dir():
        shutil.copytree(scenario / "input", tmp_path, dirs_exist_ok=True)
    before = tree(tmp_path)
    patch = (scenario / "patch.txt").read_text("utf-8")
    error: ApplyPatchError | None = None
    try:
        apply_patch_text(patch, tmp_path)
    except ApplyPatchError as exc:
        error = exc
    if name in DELIBERATE:
        why, text = DELIBERATE[name]
        assert error is not None, why
        assert str(error).startswith(text), why
        assert tree(tmp_path) == before, why
        return
    # Codex's rejections (005-009, 012, 013) leave the tree as expected/ says: untouched.
    assert tree(tmp_path) == tree(scenario / "expected")
    if error is not None:
        assert tree(tmp_path) == before


def test_scenario_014_without_a_final_newline_keeps_it_missing(tmp_path: Path) -> None:
    # Codex's unit test for 014 writes the source without a final newline and expects one
    # added; we keep the file's missing final newline (toolkit.md 5.4 worked example).
    (tmp_path / "no_newline.txt").write_bytes(b"no newline at end")
    patch = (SCENARIOS / "014_update_file_appends_trailing_newline" / "patch.txt").read_text()
    apply_patch_text(patch, tmp_path)
    assert (tmp_path / "no_newline.txt").read_bytes() == b"first line\nsecond line"
