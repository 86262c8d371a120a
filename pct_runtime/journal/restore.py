"""The file work of one undo, done only through folders it holds open.

Each file is reached from its call's working directory (walked from `/` without following
links) one folder at a time with `O_NOFOLLOW | O_DIRECTORY`, and each folder must be the
one the patch recorded (same `st_dev`/`st_ino`): a folder replaced by a symbolic link (to
the user's home, say) or by another directory refuses the undo before anything is written.
Checking, staging, renaming and unlinking then all happen relative to those descriptors,
so a folder swapped meanwhile can no longer redirect a write; the folders are walked again
after staging, as the files are checked again.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from pct_runtime.host.system.folders import FolderError, open_folder, open_root, parts_inside
from pct_runtime.host.system.staging import staging_name
from pct_runtime.journal.blobs import OPEN_CLOEXEC, OPEN_NOFOLLOW, sha256_hex, write_all
from pct_runtime.journal.capture import CaptureError, read_image
from pct_runtime.journal.records import Anchor, FileImage, PatchFile

#: A restored content (bytes, mode), or None: the file is removed.
Content = tuple[bytes, int] | None


class Refusal(Exception):
    """Undo cannot go on; the message names the path and why. Nothing was changed."""


def containment_refusal(call_id: str, files: Sequence[PatchFile]) -> str | None:
    """Why the row's files may not be restored at all, before any file is looked at: a row
    without folder identities (an older pct), or a path outside its working directory."""
    for item in files:
        anchor = item.anchor
        if anchor is None:
            return (
                f"Not undone: {call_id} was recorded by an older pct, without the folder "
                "identities undo checks before it writes, so it cannot be undone safely. "
                "Nothing was changed. `pct log --json` lists its files; restore them by hand."
            )
        parts = parts_inside(anchor.root, item.path)
        if parts is None or len(anchor.folders) != len(parts):
            return (
                f"Not undone: {item.path} is not inside {anchor.root}, the working directory "
                f"of {call_id}; undo restores files only inside it. Nothing was changed."
            )
    return None


def _folder_refusal(call_id: str, path: str, folder: str, problem: str) -> Refusal:
    return Refusal(
        f"Not undone: {path} cannot be restored because {folder} {problem}; when {call_id} "
        "ran it was a directory there, and undo writes only into that same directory, never "
        "through a link. Nothing was changed."
    )


@dataclass
class _Target:
    item: PatchFile
    anchor: Anchor
    parts: tuple[str, ...]
    folder: int = -1  # the file's folder, held open
    staged: str | None = None

    @property
    def name(self) -> str:
        return self.parts[-1]


class Restore:
    """One undo's files (`files` with anchors, already checked by `containment_refusal`).

    Use as a context manager: leaving it closes every folder and removes every staged
    file that was not renamed into place."""

    def __init__(self, call_id: str, files: Sequence[PatchFile]) -> None:
        self._call_id = call_id
        self._targets: list[_Target] = []
        for item in files:
            assert item.anchor is not None
            parts = parts_inside(item.anchor.root, item.path)
            assert parts is not None
            self._targets.append(_Target(item, item.anchor, parts))

    def __enter__(self) -> Restore:
        return self

    def __exit__(self, *exc: object) -> None:
        for target in self._targets:
            if target.staged is not None:
                with contextlib.suppress(OSError):
                    os.unlink(target.staged, dir_fd=target.folder)
                target.staged = None
            if target.folder >= 0:
                os.close(target.folder)
                target.folder = -1

    def _walk(self, target: _Target, roots: dict[str, int]) -> int:
        """The target's folder, opened from its root; refuses unless every folder on the way
        is the one the patch recorded."""
        anchor = target.anchor
        try:
            root_fd = roots.get(anchor.root)
            if root_fd is None:
                root_fd = roots[anchor.root] = open_root(anchor.root)
            fd, found = open_folder(root_fd, anchor.root, target.parts[:-1])
        except FolderError as exc:
            raise _folder_refusal(
                self._call_id, target.item.path, exc.folder, exc.problem
            ) from None
        assert fd is not None
        if found != list(anchor.folders):
            os.close(fd)
            depth = next(
                i
                for i, pair in enumerate(zip(found, anchor.folders, strict=True))
                if pair[0] != pair[1]
            )
            folder = os.path.join(anchor.root, *target.parts[:depth])
            raise _folder_refusal(
                self._call_id,
                target.item.path,
                folder,
                "was replaced by another directory (moved, or removed and made again)",
            )
        return fd

    def _walk_all(self, keep: bool) -> None:
        roots: dict[str, int] = {}
        try:
            for target in self._targets:
                fd = self._walk(target, roots)
                if keep:
                    target.folder = fd
                else:
                    os.close(fd)
        finally:
            for fd in roots.values():
                os.close(fd)

    def open(self) -> None:
        """Open every file's folder. Raises `Refusal` (naming the path) when one is not
        the folder the patch wrote in."""
        self._walk_all(keep=True)

    def recheck_folders(self) -> None:
        """Walk every folder again from its root: the held ones must still be what a fresh
        walk reaches (a folder moved away after `open` refuses). Raises `Refusal`."""
        self._walk_all(keep=False)

    def changed(self) -> tuple[str, ...]:
        """The files that are no longer exactly what the patch left."""
        return tuple(t.item.path for t in self._targets if not _matches(t, t.item.after))

    def stage(self, contents: Mapping[str, Content]) -> None:
        """Write every restored content to a staging file beside its target. Raises
        OSError; a file that failed midway (a full disk) is removed at once."""
        for target in self._targets:
            content = contents[target.item.path]
            if content is None:
                continue
            data, mode = content
            name = staging_name()
            flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | OPEN_NOFOLLOW | OPEN_CLOEXEC
            fd = os.open(name, flags, mode & 0o777, dir_fd=target.folder)
            try:
                os.fchmod(fd, mode)
                write_all(fd, data)
            except BaseException:
                os.close(fd)
                with contextlib.suppress(OSError):
                    os.unlink(name, dir_fd=target.folder)
                raise
            os.close(fd)
            target.staged = name

    def commit(self) -> None:
        """Rename each staged file into place and remove the added ones, all relative to
        the held folders. Raises OSError (what was renamed before stays renamed)."""
        for target in self._targets:
            if target.item.before is None:  # the patch added it
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(target.name, dir_fd=target.folder)
                continue
            assert target.staged is not None
            os.rename(
                target.staged, target.name, src_dir_fd=target.folder, dst_dir_fd=target.folder
            )
            target.staged = None


def _matches(target: _Target, image: FileImage | None) -> bool:
    try:
        current = read_image(target.name, dir_fd=target.folder)
    except CaptureError:
        return False
    if image is None or current is None:
        return image is None and current is None
    data, mode = current
    return mode == image.mode and sha256_hex(data) == image.sha256
