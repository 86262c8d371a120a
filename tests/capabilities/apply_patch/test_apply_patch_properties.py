"""Property tests over random small trees and random patches.

1. A rejected patch leaves the tree (and everything outside it) byte-identical.
2. Nothing outside the working directory is ever created, changed or deleted, whatever the
   symbolic links inside it point at.
3. Applying a patch and then its inverse restores the tree.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from apply_patch_generators import (
    FILE_PATHS,
    LINK_PATHS,
    PATCH_PATHS,
    WORDS,
    FileSpec,
    build_tree,
    file_specs,
    tree_and_patch,
)
from apply_patch_helpers import snapshot
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from pct_runtime.capabilities.apply_patch.errors import ApplyPatchError, CommitError
from pct_runtime.capabilities.apply_patch.executor import apply_patch_text


@st.composite
def random_patches(draw: st.DrawFn) -> str:
    lines = ["*** Begin Patch"]
    for _ in range(draw(st.integers(1, 4))):
        kind = draw(st.sampled_from(["add", "delete", "update", "move"]))
        path = draw(st.sampled_from(PATCH_PATHS))
        if kind == "add":
            lines.append(f"*** Add File: {path}")
            lines += [
                "+" + w for w in draw(st.lists(st.sampled_from(WORDS), min_size=1, max_size=3))
            ]
        elif kind == "delete":
            lines.append(f"*** Delete File: {path}")
        else:
            lines.append(f"*** Update File: {path}")
            if kind == "move":
                lines.append(f"*** Move to: {draw(st.sampled_from(PATCH_PATHS))}")
            for _ in range(draw(st.integers(1, 2))):
                lines.append("@@")
                body = draw(
                    st.lists(
                        st.tuples(st.sampled_from(" -+"), st.sampled_from(WORDS)),
                        min_size=1,
                        max_size=4,
                    )
                )
                lines += [prefix + word for prefix, word in body]
    lines.append("*** End Patch")
    return "\n".join(lines) + "\n"


SETTINGS = settings(
    max_examples=120,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)


@SETTINGS
@given(
    files=st.dictionaries(st.sampled_from(FILE_PATHS), file_specs, max_size=5),
    links=st.lists(st.sampled_from(sorted(LINK_PATHS)), unique=True, max_size=4),
    patch=random_patches(),
)
def test_rejections_change_nothing_and_nothing_outside_ever_changes(
    files: dict[str, FileSpec], links: list[str], patch: str
) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root, outside = build_tree(Path(tmp), files, links)
        before, outside_before = snapshot(root), snapshot(outside)
        base_before = sorted(os.listdir(tmp))
        try:
            apply_patch_text(patch, root)
        except CommitError:  # pragma: no cover - no faults are injected here
            raise
        except ApplyPatchError:
            assert snapshot(root) == before
        assert snapshot(outside) == outside_before
        assert sorted(os.listdir(tmp)) == base_before
        assert not any(".pct-apply-patch-" in name for name in snapshot(root))


def _without_empty_dirs(snap: dict[str, object]) -> dict[str, object]:
    files = [k for k, v in snap.items() if v != "dir"]
    return {
        k: v for k, v in snap.items() if v != "dir" or any(f.startswith(k + "/") for f in files)
    }


@SETTINGS
@given(case=tree_and_patch())
def test_applying_a_patch_and_its_inverse_restores_the_tree(
    case: tuple[dict[str, FileSpec], str, str],
) -> None:
    files, forward, inverse = case
    if forward.count("\n") <= 2:
        return  # nothing to change in this tree
    with tempfile.TemporaryDirectory() as tmp:
        root, _ = build_tree(Path(tmp), files, [])
        before = snapshot(root)
        apply_patch_text(forward, root)
        after = snapshot(root)
        assert after != before
        # A file left with no line break at all no longer records its line-ending style or
        # final newline, so the inverse cannot know them: not a round trip to check.
        assume(all(b"\n" in v[0] for v in after.values() if isinstance(v, tuple)))
        apply_patch_text(inverse, root)
        # A Move may leave an empty directory behind (like Codex); files are restored exactly.
        assert _without_empty_dirs(snapshot(root)) == _without_empty_dirs(before)
