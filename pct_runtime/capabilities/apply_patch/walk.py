"""The containment walk of a patch's paths (step 2 of `executor`'s order) and source reads.

Every path is walked from the working directory one component at a time: `lstat` relative
to the folder reached so far (no symbolic link anywhere, every parent a directory), then
that folder opened with `O_NOFOLLOW | O_DIRECTORY`. The folders stay open in `HeldFolders`
until the commit is over, so every later read, staging file, rename and unlink is relative
to a folder that was checked: a job that swaps a folder for a link to the user's home can
no longer redirect a write. Sources are read without following links, destinations must
be absent and within the file system's name limits.
"""

from __future__ import annotations

import contextlib
import errno
import io
import os
import stat
import weakref

from pct_runtime.capabilities.apply_patch.errors import PreflightError
from pct_runtime.capabilities.apply_patch.parser import PatchPath
from pct_runtime.capabilities.apply_patch.pathlimits import check_new_path
from pct_runtime.capabilities.apply_patch.source import Source, load_source
from pct_runtime.host.system.folders import DIR_FLAGS, FolderError, Identity, open_root
from pct_runtime.tuples import NamedTuple

TYPE_CHECKING = False  # `typing` stays unloaded on `pct apply-patch` (see pct_runtime.tuples)
if TYPE_CHECKING:
    from typing import Literal

OPEN_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
OPEN_CLOEXEC = getattr(os, "O_CLOEXEC", 0)

#: A folder's components below the working directory (() is the working directory).
Key = tuple[str, ...]


def folder_changed(shown: str, path: str) -> PreflightError:
    """A checked folder is gone, is a link now, or is another directory."""
    where = f"'{shown}'" if shown == path else f"'{shown}' (a folder on the way to '{path}')"
    return PreflightError(
        f"Cannot apply patch: {where} changed on disk after the patch was checked; "
        "apply_patch writes only into the folders it checked, never through a link. "
        "Re-read the files and send the patch again. Nothing was changed."
    )


def _close_all(fds: list[int]) -> None:
    while fds:
        with contextlib.suppress(OSError):
            os.close(fds.pop())


class HeldFolders:
    """The working directory and every folder below it a patch reads or writes in, open.

    `close` (or the garbage collector, for a prepared patch that is never committed)
    closes every descriptor, including those of folders the commit created."""

    def __init__(self, cwd: str) -> None:
        self.cwd = cwd
        self._open: list[int] = []
        self._closer = weakref.finalize(self, _close_all, self._open)
        try:
            root = open_root(cwd)
        except (FolderError, OSError):
            raise PreflightError(
                f"Cannot apply patch: the working directory '{cwd}' does not exist or is not "
                "a directory. Nothing was changed."
            ) from None
        self._open.append(root)
        self.root = root
        self._fds: dict[Key, int] = {(): root}
        self._ids: dict[Key, Identity] = {(): _identity_of(root)}

    def close(self) -> None:
        self._closer()

    def fd(self, key: Key) -> int:
        return self._fds[key]

    def identity(self, key: Key) -> Identity:
        return self._ids[key]

    def child(self, key: Key, st: os.stat_result, path: PatchPath) -> int:
        """The folder `key` (its last name just `lstat`ed as `st` in its parent), opened
        and kept; it must still be the directory `st` describes."""
        held = self._fds.get(key)
        if held is not None:
            return held
        try:
            fd = os.open(key[-1], DIR_FLAGS, dir_fd=self._fds[key[:-1]])
        except OSError:
            raise folder_changed("/".join(key), path.display) from None
        self._open.append(fd)
        found = _identity_of(fd)
        if found != (st.st_dev, st.st_ino):
            raise folder_changed("/".join(key), path.display)
        self._fds[key] = fd
        self._ids[key] = found
        return fd

    def make(self, parent: int, name: str) -> int:
        """Create the folder `name` in `parent` (or take the directory already there) and
        open it without following a link; the descriptor is closed with the others."""
        with contextlib.suppress(FileExistsError):
            os.mkdir(name, dir_fd=parent)
        fd = os.open(name, DIR_FLAGS, dir_fd=parent)
        self._open.append(fd)
        return fd

    def still_same(self, path_for: dict[Key, str]) -> None:
        """Every held folder is still reachable by the same names: the working directory
        walked again from `/`, each folder opened again by name in its (verified) parent,
        with the same (st_dev, st_ino). Raises `PreflightError` naming the first that is not.
        `path_for` maps a folder to the patch path shown for it."""
        try:
            fd = open_root(self.cwd)
        except (FolderError, OSError):
            fd = -1
        try:
            if fd == -1 or _identity_of(fd) != self._ids[()]:
                raise PreflightError(
                    f"Cannot apply patch: the working directory '{self.cwd}' changed on disk "
                    "after the patch was checked. Send the patch again. Nothing was changed."
                )
        finally:
            if fd != -1:
                os.close(fd)
        for key in sorted(self._ids, key=len):
            if not key:
                continue
            try:
                fd = os.open(key[-1], DIR_FLAGS, dir_fd=self._fds[key[:-1]])
            except OSError:
                fd = -1
            try:
                if fd == -1 or _identity_of(fd) != self._ids[key]:
                    shown = "/".join(key)
                    raise folder_changed(shown, path_for.get(key, shown))
            finally:
                if fd != -1:
                    os.close(fd)


def _identity_of(fd: int) -> Identity:
    st = os.fstat(fd)
    return (st.st_dev, st.st_ino)


_PATH_MAX = 4096  # Linux; paths are reached through folders, so no call would say it


def _byte_length(text: str) -> int:
    return len(text.encode("utf-8", "surrogateescape"))


class Walk(NamedTuple):
    stat: os.stat_result | None  # final component, None when missing
    existing: int  # how many leading components exist (all directories but maybe the last)
    folder: Key  # the deepest folder reached: the final component's parent when it exists


def walk_path(held: HeldFolders, path: PatchPath, new: bool = False) -> Walk:
    """Check each component from the working directory; `new`: the path is to be created,
    so a name too long to exist ends the walk like a missing one (`check_new_path` then
    says which limit it breaks)."""
    fd = held.root
    key: Key = ()
    last = len(path.parts) - 1
    st: os.stat_result | None = None
    length = _byte_length(held.cwd)
    for depth, part in enumerate(path.parts):
        length += 1 + _byte_length(part)
        try:
            if length >= _PATH_MAX:  # as the kernel would refuse the whole path
                raise OSError(errno.ENAMETOOLONG, os.strerror(errno.ENAMETOOLONG))
            st = os.lstat(part, dir_fd=fd)
        except FileNotFoundError:
            return Walk(None, depth, key)
        except OSError as exc:
            too_long = exc.errno == errno.ENAMETOOLONG
            if too_long and new:
                return Walk(None, depth, key)
            hint = " (longer than the file system allows); use a shorter path" if too_long else ""
            raise PreflightError(
                f"Cannot apply patch: checking '{path.display}' (patch line {path.line}) "
                f"failed: {exc.strerror or exc}{hint}. Nothing was changed."
            ) from None
        shown = "/".join(path.parts[: depth + 1])
        if stat.S_ISLNK(st.st_mode):
            raise PreflightError(
                f"Cannot apply patch: '{path.display}' (patch line {path.line}) goes through "
                f"the symbolic link '{shown}'. apply_patch never follows symbolic links; use a "
                "path without links. Nothing was changed."
            )
        if depth < last:
            if not stat.S_ISDIR(st.st_mode):
                raise PreflightError(
                    f"Cannot apply patch: '{path.display}' (patch line {path.line}) needs "
                    f"'{shown}' to be a directory, but it is a file. Nothing was changed."
                )
            key = path.parts[: depth + 1]
            fd = held.child(key, st, path)
    return Walk(st, len(path.parts), key)


def abs_path(cwd: str, path: PatchPath, depth: int | None = None) -> str:
    parts = path.parts if depth is None else path.parts[:depth]
    return os.path.join(cwd, *parts)


def kind_name(st: os.stat_result) -> str:
    return "a directory" if stat.S_ISDIR(st.st_mode) else "not a regular file"


def identity(st: os.stat_result) -> tuple[int, int, int, int]:
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)


def read_source(
    held: HeldFolders, path: PatchPath, verb: Literal["update", "delete"]
) -> tuple[Source, os.stat_result, Key]:
    """Open without following links, read the whole file into one buffer and validate it;
    also returns the (held) folder it is in."""
    walk = walk_path(held, path)
    if walk.stat is None:
        hint = f" Use '*** Add File: {path.display}' to create it." if verb == "update" else ""
        raise PreflightError(
            f"Cannot {verb} '{path.display}' (patch line {path.line}): the file does not "
            f"exist.{hint} Nothing was changed."
        )
    if not stat.S_ISREG(walk.stat.st_mode):
        raise PreflightError(
            f"Cannot {verb} '{path.display}' (patch line {path.line}): it is "
            f"{kind_name(walk.stat)}; apply_patch only {verb}s files. Nothing was changed."
        )
    try:
        fd = os.open(
            path.parts[-1], os.O_RDONLY | OPEN_NOFOLLOW | OPEN_CLOEXEC, dir_fd=held.fd(walk.folder)
        )
    except OSError as exc:
        raise PreflightError(
            f"Cannot {verb} '{path.display}' (patch line {path.line}): reading it failed: "
            f"{exc.strerror or exc}. Nothing was changed."
        ) from None
    try:
        st = os.fstat(fd)
        with io.FileIO(fd, closefd=False) as raw:
            data = raw.readall()  # one exact-size buffer (sized from fstat), no join
        return load_source(data, path.display, verb, path.line), st, walk.folder
    finally:
        os.close(fd)


class NewPath(NamedTuple):
    """A destination that does not exist yet: `folder` is its deepest existing folder (held),
    `missing` the names of the folders to create below it, `name` the file's own name."""

    folder: Key
    missing: tuple[str, ...]
    name: str


def check_new(held: HeldFolders, path: PatchPath, source: PatchPath | None) -> NewPath:
    """A destination that must not exist, and where it would go."""
    walk = walk_path(held, path, new=True)
    if walk.stat is not None:
        kind = "a directory" if stat.S_ISDIR(walk.stat.st_mode) else "a file"
        if source is None:
            raise PreflightError(
                f"Cannot add '{path.display}' (patch line {path.line}): {kind} already exists "
                f"there. Use '*** Update File: {path.display}' to change an existing file, or "
                "choose a new path. Nothing was changed."
            )
        raise PreflightError(
            f"Cannot move '{source.display}' to '{path.display}' (patch line {path.line}): "
            f"{kind} already exists there. Move to a path that does not exist yet. "
            "Nothing was changed."
        )
    cwd = held.cwd
    stage_dir = abs_path(cwd, path, walk.existing) if walk.existing else cwd
    check_new_path(cwd, path, walk.existing, stage_dir, source)
    missing = path.parts[walk.existing : len(path.parts) - 1]
    return NewPath(walk.folder, missing, path.parts[-1])


def appeared(folder: int, names: tuple[str, ...]) -> bool:
    """Something now exists where a new path was free: the file, or a non-folder on its way
    (a folder that appeared meanwhile is used, as `mkdir` would have made it)."""
    fd = folder
    try:
        for depth, name in enumerate(names):
            try:
                st = os.lstat(name, dir_fd=fd)
            except FileNotFoundError:
                return False
            if depth == len(names) - 1 or not stat.S_ISDIR(st.st_mode):
                return True
            child = os.open(name, DIR_FLAGS, dir_fd=fd)
            if fd != folder:
                os.close(fd)
            fd = child
        return False
    except OSError:
        return True
    finally:
        if fd != folder:
            os.close(fd)


def read_bytes(folder: int, path: PatchPath) -> tuple[bytes, os.stat_result]:
    try:
        fd = os.open(path.parts[-1], os.O_RDONLY | OPEN_NOFOLLOW | OPEN_CLOEXEC, dir_fd=folder)
    except OSError as exc:
        raise PreflightError(
            f"Cannot move '{path.display}' (patch line {path.line}): reading it failed: "
            f"{exc.strerror or exc}. Nothing was changed."
        ) from None
    try:
        with io.FileIO(fd, closefd=False) as raw:
            return raw.readall(), os.fstat(fd)
    finally:
        os.close(fd)
