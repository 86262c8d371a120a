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
