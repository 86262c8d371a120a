"""File images at commit time: hard links (or fsync'd copies), resolved off the call's path."""

from __future__ import annotations

import errno
import os
from pathlib import Path

import pytest

from pct_runtime.capabilities.apply_patch.executor import apply_patch_text
from pct_runtime.journal import PatchCapture
from pct_runtime.journal.blobs import BlobStore, sha256_hex

PATCH = "*** Begin Patch\n*** Update File: a.txt\n@@\n-old\n+new\n*** End Patch"


def _setup(tmp_path: Path) -> tuple[Path, BlobStore]:
    work = tmp_path / "work"
    work.mkdir()
    (work / "a.txt").write_text("old\n")
    return work, BlobStore(tmp_path / "agent" / "pct" / "journal-blobs")


def test_images_resolve_to_content_addresses_and_leave_nothing_pending(tmp_path: Path) -> None:
    work, blobs = _setup(tmp_path)
    capture = PatchCapture(blobs)
    apply_patch_text(PATCH, work, witness=capture)
    # Until the writer resolves them, the images are second names of the inodes.
    assert len(os.listdir(blobs.pending_dir)) == 2
    (item,) = capture.files()
    assert item.before is not None
    assert item.after is not None
    assert item.before.sha256 == sha256_hex(b"old\n")
    assert item.after.sha256 == sha256_hex(b"new\n")
    assert blobs.read(item.before.sha256) == b"old\n"
    assert blobs.read(item.after.sha256) == b"new\n"
    assert os.listdir(blobs.pending_dir) == []
    # The post-image blob is a copy: the live file is not an alias of the journal's blob.
    (work / "a.txt").write_text("edited in place\n")
    assert blobs.read(item.after.sha256) == b"new\n"


def test_without_hard_links_the_images_are_copied(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    work, blobs = _setup(tmp_path)

    def no_link(*args: object, **kwargs: object) -> None:
        raise OSError(errno.EXDEV, "Invalid cross-device link")

    monkeypatch.setattr(os, "link", no_link)
    capture = PatchCapture(blobs)
    apply_patch_text(PATCH, work, witness=capture)
    (item,) = capture.files()
    assert item.before is not None
    assert blobs.read(item.before.sha256) == b"old\n"


def test_a_file_changed_before_resolution_makes_the_patch_not_undoable(tmp_path: Path) -> None:
    work, blobs = _setup(tmp_path)
    reports: list[str] = []
    capture = PatchCapture(blobs, reports.append)
    apply_patch_text(PATCH, work, witness=capture)
    with open(work / "a.txt", "a") as handle:  # in place: same inode, new size
        handle.write("more\n")
    assert capture.files() == ()
    assert os.listdir(blobs.pending_dir) == []
    assert reports
    assert (work / "a.txt").read_text() == "new\nmore\n"  # the patch itself stands


def _inodes(folder: Path) -> list[int]:
    return sorted(entry.stat().st_ino for entry in os.scandir(folder))


def test_a_file_patched_again_is_linked_when_its_other_name_is_a_pending_image(
    tmp_path: Path,
) -> None:
    """After a first patch the file's post-image is a pending name of its inode (nlink 2):
    the second patch's pre-image links that inode again instead of copying it."""
    work, blobs = _setup(tmp_path)
    first = PatchCapture(blobs)
    apply_patch_text(PATCH, work, witness=first)
    first.pending_images()  # `pct apply-patch`: the names stay, unhashed
    inode = (work / "a.txt").stat().st_ino
    assert (work / "a.txt").stat().st_nlink == 2
    second = PatchCapture(blobs)
    apply_patch_text(
        "*** Begin Patch\n*** Update File: a.txt\n@@\n-new\n+newer\n*** End Patch",
        work,
        witness=second,
    )
    assert _inodes(blobs.pending_dir).count(inode) == 2  # the after-image and the new link
    (item,) = second.files()
    assert item.before is not None
    assert blobs.read(item.before.sha256) == b"new\n"
    assert (work / "a.txt").read_text() == "newer\n"


def test_a_second_name_elsewhere_still_gets_a_private_copy(tmp_path: Path) -> None:
    """A pending image and someone else's hard link (nlink 3), or only someone else's link
    (nlink 2): the pre-image is a copy, so writing through that name cannot change it."""
    work, blobs = _setup(tmp_path)
    first = PatchCapture(blobs)
    apply_patch_text(PATCH, work, witness=first)
    first.pending_images()
    os.link(work / "a.txt", tmp_path / "twin.txt")  # nlink 3: pending, a.txt, twin
    inode = (work / "a.txt").stat().st_ino
    second = PatchCapture(blobs)
    apply_patch_text(
        "*** Begin Patch\n*** Update File: a.txt\n@@\n-new\n+newer\n*** End Patch",
        work,
        witness=second,
    )
    assert _inodes(blobs.pending_dir).count(inode) == 1  # only the first after-image
    (tmp_path / "twin.txt").write_text("written through the twin\n")
    (item,) = second.files()
    assert item.before is not None
    assert blobs.read(item.before.sha256) == b"new\n"

    (tmp_path / "other").mkdir()
    other, other_blobs = _setup(tmp_path / "other")
    os.link(other / "a.txt", tmp_path / "other-twin.txt")  # nlink 2, no pending name
    name, _ = other_blobs.link_pending(str(other / "a.txt"))
    assert os.stat(name).st_ino != (other / "a.txt").stat().st_ino


def test_a_name_added_while_linking_gets_a_private_copy(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Someone links the file between the check and the link: the link is undone and the
    image copied."""
    work, blobs = _setup(tmp_path)
    real_link = os.link

    def link_and_race(src: str, dst: str, **kwargs: object) -> None:
        real_link(src, dst, **kwargs)  # type: ignore[arg-type]
        if dst.startswith(str(blobs.pending_dir)):
            real_link(work / "a.txt", tmp_path / "racer.txt")

    monkeypatch.setattr(os, "link", link_and_race)
    name, _ = blobs.link_pending(str(work / "a.txt"))
    monkeypatch.undo()
    assert os.stat(name).st_ino != (work / "a.txt").stat().st_ino
    assert Path(name).read_bytes() == b"old\n"
    assert os.listdir(blobs.pending_dir) == [os.path.basename(name)]


def test_two_cli_patches_of_one_file_undo_in_turn(tmp_path: Path) -> None:
    """`pct apply-patch` twice on one file (the second pre-image a link to the first
    post-image's inode), then `pct undo` twice: each undo restores its own pre-image."""
    from tests.journal.helpers import run_pct

    agent, work = tmp_path / "agent", tmp_path / "work"
    work.mkdir()
    (work / "a.txt").write_text("old\n")
    second = "*** Begin Patch\n*** Update File: a.txt\n@@\n-new\n+newer\n*** End Patch\n"
    for patch in (PATCH, second):
        done = run_pct(agent, "apply-patch", "--cwd", str(work), stdin=patch)
        assert done.returncode == 0, done.stderr
    assert (work / "a.txt").read_text() == "newer\n"
    for expected in ("new\n", "old\n"):
        undo = run_pct(agent, "undo")
        assert undo.returncode == 0, undo.stderr
        assert (work / "a.txt").read_text() == expected
