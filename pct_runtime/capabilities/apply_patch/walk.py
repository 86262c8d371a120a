"""The containment walk of a patch's paths (step 2 of `executor`'s order) and source reads.

Every path is walked from the working directory one component at a time with `lstat`:
no symbolic link anywhere, every parent a directory, sources regular files read without
following links, destinations absent and within the file system's name limits.
"""

from __future__ import annotations

import errno
import io
import os
import stat
from dataclasses import dataclass
from typing import Literal

from pct_runtime.capabilities.apply_patch.errors import PreflightError
from pct_runtime.capabilities.apply_patch.parser import PatchPath
from pct_runtime.capabilities.apply_patch.pathlimits import check_new_path
from pct_runtime.capabilities.apply_patch.source import Source, load_source

OPEN_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
OPEN_CLOEXEC = getattr(os, "O_CLOEXEC", 0)


@dataclass
class Walk:
    stat: os.stat_result | None  # final component, None when missing
    existing: int  # how many leading components exist (all directories but maybe the last)


def walk_path(cwd: str, path: PatchPath, new: bool = False) -> Walk:
    """Check each component from the working directory; `new`: the path is to be created,
    so a name too long to exist ends the walk like a missing one (`check_new_path` then
    says which limit it breaks)."""
    current = cwd
    last = len(path.parts) - 1
    st: os.stat_result | None = None
    for depth, part in enumerate(path.parts):
        current = os.path.join(current, part)
        try:
            st = os.lstat(current)
        except FileNotFoundError:
            return Walk(None, depth)
        except OSError as exc:
            too_long = exc.errno == errno.ENAMETOOLONG
            if too_long and new:
                return Walk(None, depth)
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
        if depth < last and not stat.S_ISDIR(st.st_mode):
            raise PreflightError(
                f"Cannot apply patch: '{path.display}' (patch line {path.line}) needs "
                f"'{shown}' to be a directory, but it is a file. Nothing was changed."
            )
    return Walk(st, len(path.parts))


def abs_path(cwd: str, path: PatchPath, depth: int | None = None) -> str:
    parts = path.parts if depth is None else path.parts[:depth]
    return os.path.join(cwd, *parts)


def kind_name(st: os.stat_result) -> str:
    return "a directory" if stat.S_ISDIR(st.st_mode) else "not a regular file"


def identity(st: os.stat_result) -> tuple[int, int, int, int]:
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)


def read_source(
    cwd: str, path: PatchPath, verb: Literal["update", "delete"]
) -> tuple[Source, os.stat_result]:
    """Open without following links, read the whole file into one buffer and validate it."""
    walk = walk_path(cwd, path)
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
    target = abs_path(cwd, path)
    try:
        fd = os.open(target, os.O_RDONLY | OPEN_NOFOLLOW | OPEN_CLOEXEC)
    except OSError as exc:
        raise PreflightError(
            f"Cannot {verb} '{path.display}' (patch line {path.line}): reading it failed: "
            f"{exc.strerror or exc}. Nothing was changed."
        ) from None
    try:
        st = os.fstat(fd)
        with io.FileIO(fd, closefd=False) as raw:
            data = raw.readall()  # one exact-size buffer (sized from fstat), no join
        return load_source(data, path.display, verb, path.line), st
    finally:
        os.close(fd)


def check_new(cwd: str, path: PatchPath, source: PatchPath | None) -> tuple[list[str], str]:
    """A destination that must not exist: returns (directories to create, staging dir)."""
    walk = walk_path(cwd, path, new=True)
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
    missing = [abs_path(cwd, path, depth) for depth in range(walk.existing + 1, len(path.parts))]
    stage_dir = abs_path(cwd, path, walk.existing) if walk.existing else cwd
    check_new_path(cwd, path, walk.existing, stage_dir, source)
    return missing, stage_dir
