"""A patch that cannot be fully applied changes nothing, through the real
`pct apply-patch` process: paths the OS would refuse are refused in preflight, and staging
files left by a dead writer are removed by the next patch that touches their directory."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from apply_patch_helpers import envelope, snapshot

from pct_runtime.capabilities.apply_patch.errors import PreflightError
from pct_runtime.capabilities.apply_patch.executor import apply_patch_text


def pct_apply_patch(work: Path, patch: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pct_runtime.cli", "apply-patch", "--cwd", str(work)],
        input=patch,
        capture_output=True,
        text=True,
        cwd=work.parent,
        timeout=60,
    )


@pytest.fixture
def work(tmp_path: Path) -> Path:
    path = tmp_path / "work"
    path.mkdir()
    return path


def refused(work: Path, patch: str) -> str:
    before = snapshot(work)
    done = pct_apply_patch(work, patch)
    assert done.returncode == 1, done.stdout
    assert done.stdout == ""
    assert snapshot(work) == before, "a refused patch must leave everything as it was"
    assert done.stderr.rstrip("\n").endswith("Nothing was changed.")
    return done.stderr.rstrip("\n")


def test_a_path_longer_than_path_max_is_refused_before_anything_is_written(work: Path) -> None:
    # The reproduction: 30 segments of 200 characters after an Add of first.txt.
    long = "/".join(f"d{i:02d}" + "x" * 197 for i in range(30)) + "/f.txt"
    size = len(os.fsencode(os.path.join(os.path.realpath(work), long)))
    message = refused(
        work, envelope("*** Add File: first.txt", "+one", f"*** Add File: {long}", "+x")
    )
    assert message == (
        f"Cannot add '{long[:59]}…' (patch line 4): the path is too long: joined to the "
        f"working directory it is {size} bytes; the file system allows at most 4095 bytes "
        "for a whole path. Use a shorter path or fewer directories. Nothing was changed."
    )
    assert os.listdir(work) == []


def test_a_name_longer_than_name_max_deep_in_a_new_path_is_refused(work: Path) -> None:
    name = "n" * 256
    message = refused(
        work, envelope("*** Add File: first.txt", "+one", f"*** Add File: a/b/{name}/c.txt", "+x")
    )
    assert message == (
        f"Cannot add 'a/b/{name[:55]}…' (patch line 4): the name '{name[:59]}…' (component 3 "
        "of the path) is 256 bytes long; the file system allows at most 255 bytes per name. "
        "Use a shorter name. Nothing was changed."
    )


def test_names_are_measured_in_bytes_of_the_file_system_encoding(work: Path) -> None:
    if sys.getfilesystemencoding().lower().replace("-", "") != "utf8":
        pytest.skip("needs a UTF-8 file system encoding")
    too_long = "\u00e9" * 128  # 128 characters, 256 bytes
    message = refused(work, envelope(f"*** Add File: d/{too_long}", "+x"))
    assert "is 256 bytes long; the file system allows at most 255 bytes per name." in message
    fits = "\u00e9" * 127  # 254 bytes
    done = pct_apply_patch(work, envelope(f"*** Add File: d/{fits}", "+x"))
    assert done.returncode == 0, done.stderr
    assert (work / "d" / fits).read_text() == "x\n"


def test_a_move_destination_too_long_leaves_the_source_and_earlier_sections(work: Path) -> None:
    (work / "src.txt").write_text("a\n")
    deep = "/".join(["y" * 250] * 20)
    message = refused(
        work,
        envelope(
            "*** Add File: first.txt",
            "+one",
            "*** Update File: src.txt",
            f"*** Move to: {deep}/dst.txt",
        ),
    )
    assert message.startswith(
        f"Cannot move 'src.txt' to '{deep[:59]}…' (patch line 5): the path is too long"
    )


def test_staging_files_of_dead_writers_are_removed_by_the_next_patch_there(
    work: Path,
) -> None:
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    (work / "sub").mkdir()
    (work / "other").mkdir()
    (work / "sub" / "f.txt").write_text("old\n")
    stale = work / "sub" / f".pct-apply-patch-{dead.pid}-{'a' * 32}.tmp"
    live = work / "sub" / f".pct-apply-patch-{os.getpid()}-{'b' * 32}.tmp"
    untouched = work / "other" / f".pct-apply-patch-{dead.pid}-{'c' * 32}.tmp"
    unrelated = work / "sub" / f".pct-apply-patch-{dead.pid}-notours.tmp"
    for leftover in (stale, live, untouched, unrelated):
        leftover.write_text("half-written\n")
    done = pct_apply_patch(work, envelope("*** Update File: sub/f.txt", "@@", "-old", "+new"))
    assert done.returncode == 0, done.stderr
    assert (work / "sub" / "f.txt").read_text() == "new\n"
    assert not stale.exists(), "a dead writer's staging file is removed"
    assert live.exists(), "a live writer's staging file is kept"
    assert untouched.exists(), "only directories the patch touches are cleaned"
    assert unrelated.exists(), "only exact staging names are removed"


def test_a_too_long_staging_path_is_refused_in_preflight(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A short target whose directory leaves no room for the staging name next to it.
    work = tmp_path / "w"
    work.mkdir()
    real = os.path.realpath(work)
    limit = len(os.fsencode(real)) + 1 + 10  # room for "new.txt", not for the staging name
    monkeypatch.setattr(
        "pct_runtime.capabilities.apply_patch.pathlimits._limit",
        lambda directory, name, default: limit if name == "PC_PATH_MAX" else default,
    )
    with pytest.raises(PreflightError) as info:
        apply_patch_text(envelope("*** Add File: new.txt", "+x"), work)
    assert "the temporary file written next to it needs" in str(info.value)
    assert os.listdir(work) == []


def test_an_update_in_place_needs_room_for_its_staging_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "f.txt").write_text("a\n")
    real = os.path.realpath(tmp_path)
    limit = len(os.fsencode(real)) + 1 + 10  # room for "f.txt", not for the staging name
    monkeypatch.setattr(
        "pct_runtime.capabilities.apply_patch.pathlimits._limit",
        lambda directory, name, default: limit if name == "PC_PATH_MAX" else default,
    )
    before = snapshot(tmp_path)
    with pytest.raises(PreflightError) as info:
        apply_patch_text(envelope("*** Update File: f.txt", "@@", "-a", "+b"), tmp_path)
    assert str(info.value).startswith(
        "Cannot update 'f.txt' (patch line 2): the path is too long: the temporary file "
        "written next to it needs"
    )
    assert snapshot(tmp_path) == before


def test_an_existing_file_beyond_path_max_is_refused_with_the_reason(work: Path) -> None:
    # Built with directory descriptors, as another program could: no absolute path reaches it.
    names = [f"d{i:02d}" + "x" * 197 for i in range(25)]
    fd = os.open(work, os.O_RDONLY)
    try:
        for name in names:
            os.mkdir(name, dir_fd=fd)
            inner = os.open(name, os.O_RDONLY, dir_fd=fd)
            os.close(fd)
            fd = inner
        with os.fdopen(os.open("f.txt", os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=fd), "w") as f:
            f.write("a\n")
    finally:
        os.close(fd)
    deep = "/".join([*names, "f.txt"])
    done = pct_apply_patch(work, envelope(f"*** Update File: {deep}", "@@", "-a", "+b"))
    assert done.returncode == 1
    assert "File name too long (longer than the file system allows); use a shorter path." in (
        done.stderr
    )
    assert done.stderr.rstrip("\n").endswith("Nothing was changed.")
