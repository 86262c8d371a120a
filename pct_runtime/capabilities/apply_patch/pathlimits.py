"""Refuse, before anything changes, a new path the operating system would refuse at commit.

Preflight only walks a destination up to its first missing component, so a name longer than
the file system allows (`NAME_MAX`) deeper down, or a whole path longer than `PATH_MAX`,
would otherwise pass every check and fail halfway through the commit, after earlier
operations and directories were already written. Limits come from `pathconf` on the deepest
existing directory (the file system the new entries land on) and are measured in bytes of
the file-system encoding, the way the kernel counts them.
"""

from __future__ import annotations

import os
import sys

from pct_runtime.capabilities.apply_patch.errors import PreflightError
from pct_runtime.capabilities.apply_patch.parser import PatchPath

#: Linux's defaults, used where `pathconf` cannot say (or says "no limit").
_DEFAULT_NAME_MAX = 255
_DEFAULT_PATH_MAX = 4096
#: Longest staging name: `.pct-apply-patch-<pid>-<32 hex>.tmp` with a 10-digit pid.
STAGING_NAME_BYTES = len(".pct-apply-patch-") + 10 + 1 + 32 + len(".tmp")
_SHOWN = 60


def _limit(directory: str, name: str, default: int) -> int:
    try:
        value = os.pathconf(directory, name)
    except (OSError, ValueError):
        return default
    return value if value > 0 else default


def _short(text: str) -> str:
    return text if len(text) <= _SHOWN else text[: _SHOWN - 1] + "…"


def _encoded(text: str, what: str) -> bytes:
    try:
        return os.fsencode(text)
    except UnicodeEncodeError:
        raise PreflightError(
            f"Cannot apply patch: {what} cannot be written in the file system's encoding "
            f"({sys.getfilesystemencoding()}). Use a path with other characters. "
            "Nothing was changed."
        ) from None


def check_new_path(
    cwd: str, path: PatchPath, existing: int, stage_dir: str, source: PatchPath | None
) -> None:
    """`path` (its first `existing` components exist, the last of them being `stage_dir`, or
    `cwd` when none does) can be created: every missing name and the whole absolute path
    fit the limits of the file system under `stage_dir`, and so does the staging file.

    `source` is the file being moved there, None for an Add.
    """
    shown = _short(path.display)
    action = f"add '{shown}'" if source is None else f"move '{source.display}' to '{shown}'"
    where = f"Cannot {action} (patch line {path.line})"
    name_max = _limit(stage_dir, "PC_NAME_MAX", _DEFAULT_NAME_MAX)
    path_max = _limit(stage_dir, "PC_PATH_MAX", _DEFAULT_PATH_MAX)
    for depth in range(existing, len(path.parts)):
        name = path.parts[depth]
        size = len(_encoded(name, f"the name '{_short(name)}'"))
        if size > name_max:
            raise PreflightError(
                f"{where}: the name '{_short(name)}' (component {depth + 1} of the path) is "
                f"{size} bytes long; the file system allows at most {name_max} bytes per name. "
                "Use a shorter name. Nothing was changed."
            )
    full = os.path.join(cwd, *path.parts)
    size = len(_encoded(full, f"the path '{shown}'"))
    staging = len(os.fsencode(stage_dir)) + 1 + STAGING_NAME_BYTES
    if max(size, staging) >= path_max:  # PATH_MAX counts the terminating NUL byte
        measured = (
            f"joined to the working directory it is {size} bytes"
            if size >= path_max
            else f"the temporary file written next to it needs {staging} bytes"
        )
        raise PreflightError(
            f"{where}: the path is too long: {measured}; the file system allows at most "
            f"{path_max - 1} bytes for a whole path. Use a shorter path or fewer directories. "
            "Nothing was changed."
        )


def check_staging_room(directory: str, path: PatchPath) -> None:
    """An update in place stages its new content next to the file: that name must fit too."""
    path_max = _limit(directory, "PC_PATH_MAX", _DEFAULT_PATH_MAX)
    staging = len(os.fsencode(directory)) + 1 + STAGING_NAME_BYTES
    if staging >= path_max:
        raise PreflightError(
            f"Cannot update '{_short(path.display)}' (patch line {path.line}): the path is too "
            f"long: the temporary file written next to it needs {staging} bytes; the file "
            f"system allows at most {path_max - 1} bytes for a whole path. Move the file to a "
            "shorter path first. Nothing was changed."
        )
