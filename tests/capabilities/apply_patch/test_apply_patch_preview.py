"""The approval diff: each file against its current content, nothing written."""

from __future__ import annotations

from pathlib import Path

from pct_runtime.capabilities.apply_patch.executor import prepare_patch
from pct_runtime.capabilities.apply_patch.preview import file_diffs

PATCH = (
    "*** Begin Patch\n"
    "*** Add File: notes/todo.md\n+# Todo\n"
    "*** Update File: app.py\n*** Move to: src/app.py\n@@ def main():\n"
    "-    print('hello')\n+    print('hello, console')\n"
    "*** Delete File: old.txt\n"
    "*** End Patch"
)


def test_diffs_against_disk_and_nothing_is_written(tmp_path: Path) -> None:
    (tmp_path / "app.py").write_text("import sys\n\ndef main():\n    print('hello')\n")
    (tmp_path / "old.txt").write_text("bye\n")
    before = sorted(p.name for p in tmp_path.rglob("*"))
    diffs = file_diffs(prepare_patch(PATCH, tmp_path))
    assert [(d.operation, d.path, d.source) for d in diffs] == [
        ("add", "notes/todo.md", None),
        ("move", "src/app.py", "app.py"),
        ("delete", "old.txt", None),
    ]
    assert diffs[0].lines == ("--- /dev/null", "+++ b/notes/todo.md", "@@ -0,0 +1 @@", "+# Todo")
    assert diffs[1].lines == (
        "--- a/app.py",
        "+++ b/src/app.py",
        "@@ -1,4 +1,4 @@",
        " import sys",
        " ",
        " def main():",
        "-    print('hello')",
        "+    print('hello, console')",
    )
    assert diffs[2].lines[-1] == "-bye"
    assert sorted(p.name for p in tmp_path.rglob("*")) == before


def test_a_long_diff_is_cut_with_a_count(tmp_path: Path) -> None:
    patch = (
        "*** Begin Patch\n*** Add File: big.txt\n"
        + "".join(f"+line {i}\n" for i in range(50))
        + "*** End Patch"
    )
    (diff,) = file_diffs(prepare_patch(patch, tmp_path), max_lines=10)
    assert len(diff.lines) == 11
    assert diff.lines[-1] == "… 43 more diff lines"
