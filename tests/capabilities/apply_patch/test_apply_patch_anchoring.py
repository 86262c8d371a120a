"""Where Codex is silently wrong and pct follows the toolkit.

A Move without hunks is a pure rename; a pure addition goes right after its locator, needs an
anchor, and a hunk that changes nothing is refused. Each rejection leaves the tree untouched
and ends with `Nothing was changed.`
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from apply_patch_helpers import envelope, snapshot

from pct_runtime.capabilities.apply_patch import executor
from pct_runtime.capabilities.apply_patch.errors import PatchSyntaxError, PreflightError
from pct_runtime.capabilities.apply_patch.executor import apply_patch_text


def test_a_move_without_hunks_renames_the_file_with_its_bytes_mode_and_inode(
    tmp_path: Path,
) -> None:
    data = b"\xff\xfe not UTF-8\r\nmixed\nendings\r"  # never decoded, so anything goes
    source = tmp_path / "old.bin"
    source.write_bytes(data)
    os.chmod(source, 0o751)
    inode = source.stat().st_ino
    result = apply_patch_text(
        envelope("*** Update File: old.bin", "*** Move to: deep/er/new.bin"), tmp_path
    )
    assert result.text == "Applied patch:\n- move old.bin -> deep/er/new.bin"
    assert result.details == {
        "operations": [{"operation": "move", "path": "deep/er/new.bin", "from": "old.bin"}]
    }
    moved = tmp_path / "deep" / "er" / "new.bin"
    assert not source.exists()
    assert moved.read_bytes() == data
    assert moved.stat().st_mode & 0o7777 == 0o751
    assert moved.stat().st_ino == inode


def test_a_rename_onto_another_file_system_copies_the_bytes_and_mode(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # os.rename cannot cross file systems: the bytes are staged next to the destination.
    monkeypatch.setattr(executor, "_same_device", lambda st, directory: False)
    data = b"\x00\xffbinary\r"
    (tmp_path / "a.bin").write_bytes(data)
    os.chmod(tmp_path / "a.bin", 0o640)
    apply_patch_text(envelope("*** Update File: a.bin", "*** Move to: sub/b.bin"), tmp_path)
    moved = tmp_path / "sub" / "b.bin"
    assert moved.read_bytes() == data
    assert moved.stat().st_mode & 0o7777 == 0o640
    assert sorted(p.name for p in tmp_path.rglob("*")) == ["b.bin", "sub"]


def test_renames_chain_with_other_operations(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("a\n")
    (tmp_path / "b.txt").write_text("b\n")
    apply_patch_text(
        envelope(
            "*** Update File: a.txt",
            "*** Move to: c.txt",
            "*** Update File: b.txt",
            "@@",
            "-b",
            "+B",
        ),
        tmp_path,
    )
    assert snapshot(tmp_path) == {
        "b.txt": (b"B\n", (tmp_path / "b.txt").stat().st_mode & 0o7777),
        "c.txt": (b"a\n", (tmp_path / "c.txt").stat().st_mode & 0o7777),
    }


@pytest.mark.parametrize(
    ("setup", "message"),
    [
        (
            lambda root: None,
            "Cannot move 'old.txt' (patch line 4): it does not exist; apply_patch only moves "
            "files. Nothing was changed.",
        ),
        (
            lambda root: (root / "old.txt").mkdir(),
            "Cannot move 'old.txt' (patch line 4): it is a directory; apply_patch only moves "
            "files. Nothing was changed.",
        ),
        (
            lambda root: ((root / "old.txt").write_text("x\n"), (root / "new.txt").write_text("")),
            "Cannot move 'old.txt' to 'new.txt' (patch line 5): a file already exists there. "
            "Move to a path that does not exist yet. Nothing was changed.",
        ),
        (
            lambda root: (root / "old.txt").symlink_to("elsewhere"),
            "Cannot apply patch: 'old.txt' (patch line 4) goes through the symbolic link "
            "'old.txt'. apply_patch never follows symbolic links; use a path without links. "
            "Nothing was changed.",
        ),
    ],
)
def test_a_rename_that_cannot_happen_changes_nothing(
    tmp_path: Path, setup: object, message: str
) -> None:
    setup(tmp_path)  # type: ignore[operator]
    before = snapshot(tmp_path)
    with pytest.raises(PreflightError) as info:
        apply_patch_text(
            envelope(
                "*** Add File: first.txt",
                "+x",
                "*** Update File: old.txt",
                "*** Move to: new.txt",
            ),
            tmp_path,
        )
    assert str(info.value) == message
    assert snapshot(tmp_path) == before


def test_pure_addition_after_a_locator_lands_right_after_the_locator_line(tmp_path: Path) -> None:
    target = tmp_path / "m.py"
    target.write_text("import os\n\ndef main():\n    run()\n\ndef other():\n    pass\n")
    apply_patch_text(envelope("*** Update File: m.py", "@@ def main():", "+    setup()"), tmp_path)
    assert target.read_text() == (
        "import os\n\ndef main():\n    setup()\n    run()\n\ndef other():\n    pass\n"
    )


def test_pure_addition_with_end_of_file_appends(tmp_path: Path) -> None:
    target = tmp_path / "n.txt"
    target.write_bytes(b"a\r\nb\r\n")
    apply_patch_text(envelope("*** Update File: n.txt", "+c", "*** End of File"), tmp_path)
    assert target.read_bytes() == b"a\r\nb\r\nc\r\n"


@pytest.mark.parametrize(
    ("hunk", "says"),
    [
        (["@@", "+added"], "only adds lines ('+') and nothing says where they go. Anchor it:"),
        (["+added"], "only adds lines ('+') and nothing says where they go. Anchor it:"),
        (["@@", " a", " b"], "has only context lines (' ') and no '+' or '-' line"),
        (["@@ a", "", " b"], "has only context lines (' ') and no '+' or '-' line"),
    ],
)
def test_unanchored_and_no_op_hunks_are_refused_and_nothing_changes(
    tmp_path: Path, hunk: list[str], says: str
) -> None:
    (tmp_path / "f.txt").write_text("a\n\nb\n")
    before = snapshot(tmp_path)
    patch = envelope("*** Add File: first.txt", "+x", "*** Update File: f.txt", *hunk)
    with pytest.raises(PatchSyntaxError) as info:
        apply_patch_text(patch, tmp_path)
    text = str(info.value)
    assert text.startswith("Invalid patch hunk on line 5: The hunk for 'f.txt' " + says)
    assert text.endswith("Nothing was changed.")
    assert info.value.code == "invalid-patch"
    assert snapshot(tmp_path) == before
