"""Executor: fidelity (BOM, EOL, final newline, modes), preflight rejections, staging, commits."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest
from apply_patch_helpers import envelope, snapshot
from hypothesis import given, settings
from hypothesis import strategies as st

from pct_runtime.capabilities.apply_patch import executor
from pct_runtime.capabilities.apply_patch.errors import (
    CommitError,
    PatchAbortedError,
    PreflightError,
)
from pct_runtime.capabilities.apply_patch.executor import (
    apply_patch_text,
    commit_prepared,
    prepare_patch,
)
from pct_runtime.capabilities.apply_patch.source import Source, load_source


def update(path: str, *lines: str) -> str:
    return envelope(f"*** Update File: {path}", *lines)


def test_add_update_delete_move_and_result_text(tmp_path: Path) -> None:
    (tmp_path / "mod.txt").write_text("one\ntwo\n")
    (tmp_path / "gone.txt").write_text("bye\n")
    (tmp_path / "old").mkdir()
    (tmp_path / "old" / "name.txt").write_text("old content\n")
    result = apply_patch_text(
        envelope(
            "*** Add File: nested/deep/new.txt",
            "+created",
            "*** Delete File: gone.txt",
            "*** Update File: mod.txt",
            "@@",
            "-two",
            "+2",
            "*** Update File: old/name.txt",
            "*** Move to: renamed/name.txt",
            "@@",
            "-old content",
            "+new content",
        ),
        tmp_path,
    )
    assert result.text == (
        "Applied patch:\n- add nested/deep/new.txt\n- delete gone.txt\n- update mod.txt\n"
        "- move old/name.txt -> renamed/name.txt"
    )
    assert result.details == {
        "operations": [
            {"operation": "add", "path": "nested/deep/new.txt"},
            {"operation": "delete", "path": "gone.txt"},
            {"operation": "update", "path": "mod.txt"},
            {"operation": "move", "path": "renamed/name.txt", "from": "old/name.txt"},
        ]
    }
    assert snapshot(tmp_path) == {
        "nested": "dir",
        "nested/deep": "dir",
        "nested/deep/new.txt": (b"created\n", 0o644 & ~_umask()),
        "mod.txt": (b"one\n2\n", _mode(tmp_path / "mod.txt")),
        "old": "dir",
        "renamed": "dir",
        "renamed/name.txt": (b"new content\n", _mode(tmp_path / "renamed/name.txt")),
    }


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def _mode(path: Path) -> int:
    return path.stat().st_mode & 0o7777


@pytest.mark.parametrize(
    ("source", "hunk", "expected"),
    [
        # The worked example: a missing final newline stays missing (Codex would add one).
        (b"a\nb", ["@@", " a", "-b"], b"a"),
        (b"a\nb", ["@@", " b", "+c"], b"a\nb\nc"),
        (b"a\nb", ["@@", "-a", "+z"], b"z\nb"),
        (b"a\r\nb\r\n", ["@@", " a", "-b", "+c", "+d"], b"a\r\nc\r\nd\r\n"),
        (b"a\r\nb", ["@@", "-b", "+c"], b"a\r\nc"),
        (b"\xef\xbb\xbfa\nb\n", ["@@", "-a", "+z"], b"\xef\xbb\xbfz\nb\n"),
        (b"\xef\xbb\xbfa\r\n", ["@@", "-a", "+z", "+y"], b"\xef\xbb\xbfz\r\ny\r\n"),
        (b"", ["@@", "+x", "*** End of File"], b"x\n"),
        (b"\xef\xbb\xbf", ["@@", "+x", "*** End of File"], b"\xef\xbb\xbfx\n"),
        (b"only\n", ["@@", "-only"], b""),
        (
            "na\u00efve caf\u00e9\n".encode(),
            ["@@", "-na\u00efve caf\u00e9", "+\u2705"],
            "\u2705\n".encode(),
        ),
    ],
)
def test_fidelity(tmp_path: Path, source: bytes, hunk: list[str], expected: bytes) -> None:
    (tmp_path / "f").write_bytes(source)
    apply_patch_text(update("f", *hunk), tmp_path)
    assert (tmp_path / "f").read_bytes() == expected


def test_modes_are_preserved_including_exec_and_private_bits(tmp_path: Path) -> None:
    for name, mode in (("run.sh", 0o755), ("secret", 0o600), ("odd", 0o640)):
        (tmp_path / name).write_text("x\n")
        os.chmod(tmp_path / name, mode)
    os.chmod(tmp_path / "odd", 0o640)
    apply_patch_text(
        envelope(
            "*** Update File: run.sh",
            "-x",
            "+y",
            "*** Update File: secret",
            "-x",
            "+y",
            "*** Update File: odd",
            "*** Move to: moved",
            "-x",
            "+y",
        ),
        tmp_path,
    )
    assert _mode(tmp_path / "run.sh") == 0o755
    assert _mode(tmp_path / "secret") == 0o600
    assert _mode(tmp_path / "moved") == 0o640


def test_staging_is_exclusive_next_to_the_target_and_never_wider(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "d").mkdir()
    (tmp_path / "d" / "secret").write_text("x\n")
    os.chmod(tmp_path / "d" / "secret", 0o600)
    opened: list[tuple[str, int, int, tuple[int, int] | None]] = []
    real_open = os.open

    def spy(path: str, flags: int, mode: int = 0o777, *, dir_fd: int | None = None) -> int:
        folder = None
        if dir_fd is not None:
            st = os.fstat(dir_fd)
            folder = (st.st_dev, st.st_ino)
        opened.append((str(path), flags, mode, folder))
        return real_open(path, flags, mode, dir_fd=dir_fd)

    monkeypatch.setattr(executor.os, "open", spy)
    apply_patch_text(update("d/secret", "-x", "+y"), tmp_path)
    staged = [row for row in opened if ".pct-apply-patch-" in row[0]]
    assert len(staged) == 1
    name, flags, mode, folder = staged[0]
    d = os.stat(tmp_path / "d")
    assert folder == (d.st_dev, d.st_ino)  # relative to the held folder, never by path
    assert "/" not in name
    assert name.startswith(f".pct-apply-patch-{os.getpid()}-")
    assert name.endswith(".tmp")
    assert flags & os.O_EXCL
    assert flags & os.O_CREAT
    assert flags & os.O_NOFOLLOW
    assert mode == 0o600
    assert sorted(os.listdir(tmp_path / "d")) == ["secret"]


def test_umask_stripped_bits_are_restored(tmp_path: Path) -> None:
    (tmp_path / "g").write_text("x\n")
    os.chmod(tmp_path / "g", 0o775)
    old = os.umask(0o077)
    try:
        apply_patch_text(update("g", "-x", "+y"), tmp_path)
    finally:
        os.umask(old)
    assert _mode(tmp_path / "g") == 0o775


def rejected(tmp_path: Path, patch: str) -> str:
    before = snapshot(tmp_path)
    with pytest.raises(PreflightError) as info:
        apply_patch_text(patch, tmp_path)
    assert snapshot(tmp_path) == before
    return str(info.value)


def test_symlink_as_target_is_refused(tmp_path: Path) -> None:
    outside = tmp_path / "outside.txt"
    outside.write_text("x\n")
    root = tmp_path / "root"
    root.mkdir()
    (root / "link.txt").symlink_to(outside)
    assert rejected(root, update("link.txt", "-x", "+y")) == (
        "Cannot apply patch: 'link.txt' (patch line 2) goes through the symbolic link "
        "'link.txt'. apply_patch never follows symbolic links; use a path without links. "
        "Nothing was changed."
    )
    assert outside.read_text() == "x\n"


def test_symlinked_directory_component_is_refused_for_every_operation(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "f").write_text("x\n")
    root = tmp_path / "root"
    root.mkdir()
    (root / "sub").symlink_to(outside, target_is_directory=True)
    for patch in (
        envelope("*** Add File: sub/new", "+x"),
        envelope("*** Delete File: sub/f"),
        update("sub/f", "-x", "+y"),
        envelope("*** Add File: ok.txt", "+x", "*** Add File: sub/deeper/x", "+x"),
    ):
        assert "goes through the symbolic link 'sub'" in rejected(root, patch)
    assert sorted(os.listdir(outside)) == ["f"]


def test_non_directory_parent_is_refused(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("x\n")
    assert rejected(tmp_path, envelope("*** Add File: file/child", "+x")) == (
        "Cannot apply patch: 'file/child' (patch line 2) needs 'file' to be a directory, but "
        "it is a file. Nothing was changed."
    )


def test_add_and_move_never_overwrite(tmp_path: Path) -> None:
    (tmp_path / "dup.txt").write_text("old\n")
    (tmp_path / "src.txt").write_text("s\n")
    (tmp_path / "adir").mkdir()
    assert rejected(tmp_path, envelope("*** Add File: dup.txt", "+new")) == (
        "Cannot add 'dup.txt' (patch line 2): a file already exists there. Use "
        "'*** Update File: dup.txt' to change an existing file, or choose a new path. "
        "Nothing was changed."
    )
    assert "a directory already exists there" in rejected(
        tmp_path, envelope("*** Add File: adir", "+new")
    )
    assert rejected(
        tmp_path, envelope("*** Update File: src.txt", "*** Move to: dup.txt", "-s", "+t")
    ) == (
        "Cannot move 'src.txt' to 'dup.txt' (patch line 3): a file already exists there. "
        "Move to a path that does not exist yet. Nothing was changed."
    )


def test_missing_and_non_file_sources(tmp_path: Path) -> None:
    (tmp_path / "dir").mkdir()
    assert rejected(tmp_path, update("missing.txt", "-a", "+b")) == (
        "Cannot update 'missing.txt' (patch line 2): the file does not exist. Use "
        "'*** Add File: missing.txt' to create it. Nothing was changed."
    )
    assert rejected(tmp_path, envelope("*** Delete File: missing.txt")) == (
        "Cannot delete 'missing.txt' (patch line 2): the file does not exist. Nothing was changed."
    )
    assert rejected(tmp_path, envelope("*** Delete File: dir")) == (
        "Cannot delete 'dir' (patch line 2): it is a directory; apply_patch only deletes "
        "files. Nothing was changed."
    )
    assert rejected(tmp_path, update("dir", "-a")) == (
        "Cannot update 'dir' (patch line 2): it is a directory; apply_patch only updates "
        "files. Nothing was changed."
    )


def test_source_encoding_and_line_endings_are_checked_before_any_change(tmp_path: Path) -> None:
    (tmp_path / "ok.txt").write_text("a\n")
    (tmp_path / "bin").write_bytes(b"a\n\xff\xfe\n")
    (tmp_path / "cr").write_bytes(b"a\nb\rc\n")
    (tmp_path / "mixed").write_bytes(b"a\r\nb\nc\r\n")
    first = ["*** Update File: ok.txt", "-a", "+b"]
    assert rejected(tmp_path, envelope(*first, "*** Update File: bin", "-a")) == (
        "Cannot update 'bin' (patch line 5): it is not valid UTF-8 text (first invalid byte "
        "on file line 2); apply_patch only edits UTF-8 text files. Nothing was changed."
    )
    assert rejected(tmp_path, envelope(*first, "*** Delete File: bin")) == (
        "Cannot delete 'bin' (patch line 5): it is not valid UTF-8 text (first invalid byte on "
        "file line 2); apply_patch does not delete binary files. Nothing was changed."
    )
    assert rejected(tmp_path, envelope(*first, "*** Update File: cr", "-a")) == (
        "Cannot update 'cr' (patch line 5): file line 2 contains a carriage return (CR) that "
        "is not part of a CRLF line ending; apply_patch only handles files whose lines all end "
        "in LF or all end in CRLF. Nothing was changed."
    )
    assert rejected(tmp_path, envelope(*first, "*** Delete File: mixed")) == (
        "Cannot delete 'mixed' (patch line 5): the file mixes CRLF and LF line endings (file "
        "line 2 ends with LF only); apply_patch only handles files with one line-ending style. "
        "Nothing was changed."
    )


def test_a_late_mismatch_leaves_earlier_operations_uncommitted(tmp_path: Path) -> None:
    # Codex's CLI leaves created.txt behind (scenario 015); we check everything first.
    (tmp_path / "f").write_text("a\n")
    before = snapshot(tmp_path)
    with pytest.raises(Exception, match="does not match the file"):
        apply_patch_text(envelope("*** Add File: created.txt", "+hello", *update_lines()), tmp_path)
    assert snapshot(tmp_path) == before


def update_lines() -> list[str]:
    return ["*** Update File: f", "@@", "-zzz", "+y"]


def test_hard_links_to_one_file_are_the_same_file(tmp_path: Path) -> None:
    (tmp_path / "a").write_text("x\n")
    os.link(tmp_path / "a", tmp_path / "b")
    assert rejected(tmp_path, envelope("*** Delete File: a", "*** Delete File: b")) == (
        "Cannot apply patch: 'a' (patch line 2) and 'b' (patch line 3) are the same file on "
        "disk. Change each file in one section only. Nothing was changed."
    )


def test_missing_working_directory(tmp_path: Path) -> None:
    with pytest.raises(PreflightError) as info:
        apply_patch_text(envelope("*** Add File: a", "+x"), tmp_path / "nope")
    assert str(info.value) == (
        f"Cannot apply patch: the working directory '{tmp_path / 'nope'}' does not exist or is "
        "not a directory. Nothing was changed."
    )


def test_changed_after_validation_is_refused(tmp_path: Path) -> None:
    (tmp_path / "f").write_text("a\n")
    prepared = prepare_patch(update("f", "-a", "+b"), tmp_path)
    (tmp_path / "f").write_text("a\nmore\n")
    with pytest.raises(PreflightError) as info:
        commit_prepared(prepared)
    assert str(info.value) == (
        "Cannot apply patch: 'f' changed on disk after the patch was checked. Re-read the "
        "file and send the patch again. Nothing was changed."
    )
    assert (tmp_path / "f").read_text() == "a\nmore\n"


def test_abort_before_commit_changes_nothing_and_cleans_staging(tmp_path: Path) -> None:
    (tmp_path / "f").write_text("a\n")
    prepared = prepare_patch(update("f", "-a", "+b"), tmp_path)
    calls = iter([False, True])
    with pytest.raises(PatchAbortedError) as info:
        commit_prepared(prepared, lambda: next(calls))
    assert str(info.value) == "Apply Patch was cancelled before any file changed."
    assert sorted(os.listdir(tmp_path)) == ["f"]
    assert (tmp_path / "f").read_text() == "a\n"


def test_commit_failure_reports_what_was_applied(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "a").write_text("x\n")
    (tmp_path / "b").write_text("x\n")
    (tmp_path / "c").write_text("x\n")
    real_rename = os.rename
    count = {"n": 0}

    def flaky(src: str, dst: str, **dir_fds: int) -> None:
        count["n"] += 1
        if count["n"] == 2:
            raise OSError(28, "No space left on device")
        real_rename(src, dst, **dir_fds)

    monkeypatch.setattr(executor.os, "rename", flaky)
    with pytest.raises(CommitError) as info:
        apply_patch_text(
            envelope(
                "*** Update File: a",
                "-x",
                "+y",
                "*** Update File: b",
                "-x",
                "+y",
                "*** Delete File: c",
            ),
            tmp_path,
        )
    assert str(info.value) == (
        "Patch partially applied: committing 'update b' failed (No space left on device); "
        "outcome unknown.\nAlready applied:\n- update a\nNot applied:\n- delete c\n"
        "Do not resend the whole patch: re-read the affected files and patch only what is "
        "still missing."
    )
    assert info.value.details["failed"] == {"operation": "update", "path": "b", "state": "unknown"}
    assert (tmp_path / "a").read_text() == "y\n"
    assert (tmp_path / "b").read_text() == "x\n"
    assert (tmp_path / "c").exists()
    assert sorted(os.listdir(tmp_path)) == ["a", "b", "c"]  # no staging file left behind
    assert count["n"] == 2  # never retried


def test_move_whose_source_cannot_be_removed_is_partial(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "s").write_text("x\n")

    def refuse(path: str, **dir_fd: int) -> None:
        raise OSError(1, "Operation not permitted")

    monkeypatch.setattr(executor.os, "unlink", refuse)
    with pytest.raises(CommitError) as info:
        apply_patch_text(envelope("*** Update File: s", "*** Move to: t", "-x", "+y"), tmp_path)
    assert str(info.value).startswith(
        "Patch partially applied: committing 'move s -> t' failed ('t' was written but "
        "removing 's' failed: Operation not permitted); partially applied.\nAlready applied:\n"
        "(none)\nNot applied:\n(none)\n"
    )
    assert info.value.details["failed"]["state"] == "partial"


def test_empty_directories_are_created_in_order_and_kept(tmp_path: Path) -> None:
    (tmp_path / "old").mkdir()
    (tmp_path / "old" / "f").write_text("x\n")
    apply_patch_text(
        envelope(
            "*** Add File: a/b/one",
            "+1",
            "*** Add File: a/b/two",
            "+2",
            "*** Update File: old/f",
            "*** Move to: a/c/f",
            "-x",
            "+y",
        ),
        tmp_path,
    )
    assert (tmp_path / "old").is_dir()
    assert not any((tmp_path / "old").iterdir())
    assert (tmp_path / "a/b/one").read_text() == "1\n"
    assert (tmp_path / "a/c/f").read_text() == "y\n"
    assert stat.S_ISDIR((tmp_path / "a/b").stat().st_mode)


def test_staging_failure_changes_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "a").write_text("x\n")
    (tmp_path / "b").write_text("x\n")
    real_open = os.open

    def no_space(path: str, flags: int, mode: int = 0o777, *, dir_fd: int | None = None) -> int:
        in_sub = dir_fd is not None and os.fstat(dir_fd).st_ino == os.stat(tmp_path / "sub").st_ino
        if ".pct-apply-patch-" in str(path) and in_sub:
            raise OSError(28, "No space left on device")
        return real_open(path, flags, mode, dir_fd=dir_fd)

    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "c").write_text("x\n")
    monkeypatch.setattr(executor.os, "open", no_space)
    before = snapshot(tmp_path)
    with pytest.raises(PreflightError) as info:
        apply_patch_text(
            envelope(
                "*** Update File: a",
                "-x",
                "+y",
                "*** Update File: sub/c",
                "-x",
                "+y",
            ),
            tmp_path,
        )
    assert str(info.value) == (
        "Cannot apply patch: preparing the new content of 'sub/c' failed: No space left on "
        "device. Nothing was changed."
    )
    assert snapshot(tmp_path) == before  # the staged copy of 'a' was removed too


def test_a_destination_that_appears_after_validation_is_refused(tmp_path: Path) -> None:
    prepared = prepare_patch(envelope("*** Add File: n.txt", "+x"), tmp_path)
    (tmp_path / "n.txt").write_text("someone else\n")
    with pytest.raises(PreflightError) as info:
        commit_prepared(prepared)
    assert str(info.value) == (
        "Cannot apply patch: 'n.txt' appeared on disk after the patch was checked. Re-read "
        "and send the patch again. Nothing was changed."
    )
    assert (tmp_path / "n.txt").read_text() == "someone else\n"


def test_the_cli_path_imports_neither_lark_nor_asyncio(tmp_path: Path) -> None:
    import subprocess
    import sys

    code = (
        "import sys\n"
        "from pct_runtime.cli_commands import apply_patch_cmd\n"
        f"rc = apply_patch_cmd.main(['--cwd', {str(tmp_path)!r}, {str(tmp_path / 'p')!r}])\n"
        "print(rc, 'lark' in sys.modules, 'asyncio' in sys.modules)\n"
    )
    (tmp_path / "p").write_text(envelope("*** Add File: a", "+x"))
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.stdout.splitlines()[-1] == "0 False False"


SOURCE_BYTES = st.lists(
    st.sampled_from([b"a", b"\n", b"\r\n", b"\r", b"\xc3\xa9", b"\xe2\x80\x94", b"\xff", b" "]),
    max_size=24,
).map(b"".join)


def _loaded(data: bytes) -> object:
    try:
        source = load_source(data, "f", "update", 2)
    except PreflightError as exc:
        return str(exc)
    lines = [source.text(pos) for pos in _starts(source)]
    return (lines, source.eol.decode(), source.bom, source.final_newline)


def _starts(source: Source) -> list[int]:
    starts, pos = [], source.start
    while pos < source.end:
        starts.append(pos)
        pos = source.raw(pos)[1]
    return starts


def test_line_iteration_and_offsets_agree() -> None:
    for data in (b"a\nbb\n", b"\xef\xbb\xbfa\r\nb", b"", b"\n\n", b"x"):
        source = load_source(data, "f", "update", 2)
        starts = _starts(source)
        ends = [*starts[1:], source.end] if starts else []
        assert [len(line) for line in source.lines()] == [
            b - a for a, b in zip(starts, ends, strict=True)
        ]
        assert source.last_line() == (starts[-1] if starts else None)
        assert [source.line_number(pos) for pos in starts] == list(range(1, len(starts) + 1))


@pytest.mark.parametrize(
    ("data", "edits", "expected"),
    [
        (b"a\nb", [(2, 3, [])], b"a"),
        (b"a\nb", [(3, 3, ["c"])], b"a\nb\nc"),
        (b"a\nb", [(2, 3, ["x", ""])], b"a\nx\n"),
        (b"\xef\xbb\xbfa\r\nb\r\n", [(3, 6, ["z"])], b"\xef\xbb\xbfz\r\nb\r\n"),
        (b"\xef\xbb\xbf", [(3, 3, ["x"])], b"\xef\xbb\xbfx\n"),
        (b"only", [(0, 4, [])], b""),
        (b"a\nb\n", [(2, 2, ["i"]), (2, 4, ["B"])], b"a\ni\nB\n"),
    ],
)
def test_rewrite_keeps_bom_line_endings_and_a_missing_final_newline(
    data: bytes, edits: list[tuple[int, int, list[str]]], expected: bytes
) -> None:
    source = load_source(data, "f", "update", 2)
    assert b"".join(bytes(piece) for piece in source.rewrite(edits)) == expected


def _reference(data: bytes) -> object:
    """The whole-file definition, written independently of the source loader."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        return ("utf8", data.count(b"\n", 0, exc.start) + 1)
    bom = text.startswith("\ufeff")
    text = text[1:] if bom else text
    for i, ch in enumerate(text):
        if ch == "\r" and text[i + 1 : i + 2] != "\n":
            return ("cr", text.count("\n", 0, i) + 1)
    if "\r\n" in text:
        for i, ch in enumerate(text):
            if ch == "\n" and (i == 0 or text[i - 1] != "\r"):
                return ("mixed", text.count("\n", 0, i) + 1)
    if text == "":
        return ([], "\n", bom, True)
    eol = "\r\n" if "\r\n" in text else "\n"
    lines = text.split(eol)
    final = lines[-1] == ""
    if final:
        lines.pop()
    return (lines, eol, bom, final)


def _kind(result: object) -> object:
    if not isinstance(result, str):
        return result
    import re

    line = int(re.search(r"file line (\d+)", result).group(1))  # type: ignore[union-attr]
    if "UTF-8" in result:
        return ("utf8", line)
    if "carriage return" in result:
        return ("cr", line)
    return ("mixed", line)


@settings(max_examples=400, deadline=None)
@given(data=st.one_of(SOURCE_BYTES, SOURCE_BYTES.map(lambda b: b"\xef\xbb\xbf" + b)))
def test_source_loader_matches_the_whole_file_definition(data: bytes) -> None:
    assert _kind(_loaded(data)) == _reference(data)
