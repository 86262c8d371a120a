"""Reaching a changed file from its working directory without following any link.

A job can replace a folder under the working directory by a symbolic link (to the user's
home) or by another directory between a patch and its undo. So the images of a patch are
taken, and undo restores them, through directory descriptors opened one component at a
time with `O_NOFOLLOW | O_DIRECTORY` from the working directory, itself reached from `/`
the same way; the patch records every folder's identity (`st_dev`, `st_ino`) and undo
writes only when each is still the same folder.

Light on purpose (os, errno, stat): `pct apply-patch` imports it.
"""

from __future__ import annotations

import errno
import os
import stat

#: (st_dev, st_ino) of a folder.
Identity = tuple[int, int]
#: `FolderError.problem` of a folder that is not there (`open_folder(missing_ok=True)`).
MISSING = "no longer exists"

DIR_FLAGS = (
    os.O_RDONLY
    | getattr(os, "O_DIRECTORY", 0)
    | getattr(os, "O_NOFOLLOW", 0)
    | getattr(os, "O_CLOEXEC", 0)
)


def path_text(*segments: str | os.PathLike[str]) -> str:
    """`str(PurePosixPath(*segments))`: joined, empty and `.` parts dropped, one leading `/`
    (two for exactly two: POSIX leaves `//` to the system), `.` for nothing."""
    root = ""
    parts: list[str] = []
    for given in segments:
        segment = os.fspath(given)
        if segment.startswith("/"):
            root = "//" if segment.startswith("//") and not segment.startswith("///") else "/"
            parts = []
        parts += [part for part in segment.split("/") if part and part != "."]
    return root + "/".join(parts) or "."


class FolderError(Exception):
    """A folder on the way to a file could not be opened as the folder it was."""

    def __init__(self, folder: str, problem: str) -> None:
        super().__init__(f"{folder} {problem}")
        self.folder = folder
        self.problem = problem


def parts_inside(root: str, path: str) -> tuple[str, ...] | None:
    """The components of `path` below `root`, None unless it is strictly inside (no `.`,
    `..` or empty component: what a patch wrote is always a plain path below its root)."""
    if not os.path.isabs(root) or not os.path.isabs(path):
        return None
    prefix = root if root.endswith("/") else root + "/"
    if not path.startswith(prefix):
        return None
    parts = tuple(path[len(prefix) :].split("/"))
    if any(part in ("", ".", "..") for part in parts):
        return None
    return parts


def identity(fd: int) -> Identity:
    st = os.fstat(fd)
    return (st.st_dev, st.st_ino)


def _problem(parent: int, name: str, exc: OSError) -> str:
    if exc.errno == errno.ENOENT:
        return MISSING
    try:
        st = os.lstat(name, dir_fd=parent)
    except OSError:
        return f"cannot be opened ({exc.strerror or exc})"
    if stat.S_ISLNK(st.st_mode):
        return "is now a symbolic link"
    if not stat.S_ISDIR(st.st_mode):
        return "is no longer a directory"
    return f"cannot be opened ({exc.strerror or exc})"


def open_child(parent: int, name: str, shown: str) -> int:
    """The folder `name` in `parent`, never through a link. Raises `FolderError`."""
    try:
        return os.open(name, DIR_FLAGS, dir_fd=parent)
    except OSError as exc:
        raise FolderError(shown, _problem(parent, name, exc)) from None


def open_root(root: str) -> int:
    """The working directory `root` (a real path), walked from `/` with no link followed.
    Raises `FolderError` naming the component that is a link, missing or not a folder."""
    if not os.path.isabs(root):
        raise FolderError(root, "is not an absolute path")
    fd = os.open("/", DIR_FLAGS)
    shown = ""
    for part in (p for p in root.split("/") if p):
        shown += "/" + part
        try:
            child = open_child(fd, part, shown)
        finally:
            os.close(fd)
        fd = child
    return fd


def open_folder(
    root_fd: int, root: str, folders: tuple[str, ...], *, missing_ok: bool = False
) -> tuple[int | None, list[Identity]]:
    """The folder `root/folders…` as a descriptor the caller closes, and the identities of
    the root and of each folder opened on the way. With `missing_ok` a missing folder ends
    the walk: (None, the identities of those that exist). Raises `FolderError`."""
    found = [identity(root_fd)]
    fd = os.dup(root_fd)
    shown = root.rstrip("/")
    for name in folders:
        shown += "/" + name
        try:
            child = open_child(fd, name, shown)
        except FolderError as exc:
            os.close(fd)
            if missing_ok and exc.problem == MISSING:
                return None, found
            raise
        os.close(fd)
        fd = child
        found.append(identity(fd))
    return fd, found
