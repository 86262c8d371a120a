"""The capture root: the one folder every capture folder and recovery file lives under.

The spec puts recovery files in the OS temp dir, but `$TMPDIR` and the OS temp dir are
writable roots of a `workspace-write` job, and a job that can rename entries there can swap
pct's folder for a symlink. So the root is the user's private runtime temp dir,
`$XDG_RUNTIME_DIR/pct/` (a per-user tmpfs, cleared at logout), when that is set, absolute, a
real directory of ours with mode 0700 and not inside `$TMPDIR` or the OS temp dir; else
`<agent dir>/pct/output/`. The sandbox hides `<agent dir>/pct/` from jobs; it binds
`capture_root()` read-only so a job's shell can still read the files the model is pointed to.

The root is opened once per process (`O_NOFOLLOW | O_DIRECTORY`, close-on-exec, so no job
inherits it) and every later create, list or unlink is relative to that descriptor or to a
folder descriptor opened from it: a path a job renames or swaps afterwards can at worst point
the shown path elsewhere, never make pct write or delete outside its own folders.
"""

from __future__ import annotations

import contextlib
import os
import stat
import tempfile
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from pct_runtime.config.paths import AGENT_DIR_ENV, agent_dir

RUNTIME_DIR_ENV = "XDG_RUNTIME_DIR"
ROOT_NAME = "pct"  # under $XDG_RUNTIME_DIR
FALLBACK_PARTS = ("pct", "output")  # under the agent dir

OPEN_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
OPEN_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
OPEN_DIRECTORY = getattr(os, "O_DIRECTORY", 0)
DIR_FLAGS = os.O_RDONLY | OPEN_DIRECTORY | OPEN_NOFOLLOW | OPEN_CLOEXEC


@dataclass(frozen=True)
class CaptureRoot:
    """An open capture root: the path shown in recovery lines, and the descriptor used."""

    path: str
    fd: int


def _is_private_dir(st: os.stat_result) -> bool:
    return stat.S_ISDIR(st.st_mode) and st.st_uid == os.geteuid()


def open_private_child(parent_fd: int, name: str) -> int:
    """Open (creating it 0700 if missing) the directory `name` under `parent_fd`.

    Never follows a symlink; refuses a directory of another user; tightens its mode to 0700.
    """
    with contextlib.suppress(FileExistsError):
        os.mkdir(name, 0o700, dir_fd=parent_fd)
    fd = os.open(name, DIR_FLAGS, dir_fd=parent_fd)
    try:
        st = os.fstat(fd)
        if not _is_private_dir(st):
            raise PermissionError(f"{name} belongs to another user")
        if stat.S_IMODE(st.st_mode) != 0o700:
            os.fchmod(fd, 0o700)
    except BaseException:
        os.close(fd)
        raise
    return fd


def _inside(path: str, roots: list[str]) -> bool:
    real = os.path.realpath(path)
    return any(real == root or real.startswith(root.rstrip("/") + "/") for root in roots)


def _job_temp_roots(env: Mapping[str, str]) -> list[str]:
    """The temp trees a `workspace-write` job may write (as the sandbox policy lists them)."""
    roots = [env.get("TMPDIR", ""), tempfile.gettempdir()]
    return [os.path.realpath(r) for r in roots if r and os.path.isabs(r)]


def _open_runtime_dir(env: Mapping[str, str]) -> CaptureRoot | None:
    """`$XDG_RUNTIME_DIR/pct`, or None when the runtime dir is unset or not safe to use."""
    base = env.get(RUNTIME_DIR_ENV, "")
    if not base or not os.path.isabs(base) or _inside(base, _job_temp_roots(env)):
        return None
    try:
        base_fd = os.open(base, DIR_FLAGS)
    except OSError:
        return None
    try:
        st = os.fstat(base_fd)
        if not _is_private_dir(st) or stat.S_IMODE(st.st_mode) & 0o077:
            return None  # the XDG rules: owned by the user, nobody else may enter
        fd = open_private_child(base_fd, ROOT_NAME)
    except OSError:
        return None
    finally:
        os.close(base_fd)
    return CaptureRoot(os.path.join(base, ROOT_NAME), fd)


def _open_agent_dir(env: Mapping[str, str]) -> CaptureRoot:
    """`<agent dir>/pct/output`; the agent dir itself is the user's choice and may be a link."""
    base = agent_dir(env)
    base.mkdir(parents=True, exist_ok=True)
    fd = os.open(base, os.O_RDONLY | OPEN_DIRECTORY | OPEN_CLOEXEC)
    try:
        for part in FALLBACK_PARTS:
            child = open_private_child(fd, part)
            os.close(fd)
            fd = child
    except BaseException:
        os.close(fd)
        raise
    return CaptureRoot(str(base.joinpath(*FALLBACK_PARTS)), fd)


def open_capture_root(env: Mapping[str, str] | None = None) -> CaptureRoot:
    """Open the capture root for `env` (default: this process's). Raises OSError when even
    the agent-dir fallback cannot be created. The caller owns the descriptor."""
    environ = os.environ if env is None else env
    return _open_runtime_dir(environ) or _open_agent_dir(environ)


def open_given_root(path: str | os.PathLike[str]) -> CaptureRoot:
    """An existing folder used as the root in place of the default (tests, benches)."""
    text = os.fspath(path)
    return CaptureRoot(text, os.open(text, DIR_FLAGS))


_lock = threading.Lock()
_roots: dict[tuple[str, ...], CaptureRoot] = {}


def process_capture_root() -> CaptureRoot:
    """This process's capture root, opened on first use and held for the process's life
    (one per location: a test that points the agent dir elsewhere gets its own)."""
    key = tuple(os.environ.get(k, "") for k in (RUNTIME_DIR_ENV, "TMPDIR", AGENT_DIR_ENV, "HOME"))
    with _lock:
        root = _roots.get(key)
        if root is None:
            root = _roots[key] = open_capture_root()
        return root


def capture_root() -> Path:
    """Where this process's capture folders live: what a sandbox masks from jobs (or binds
    read-only so they can read recovery files). Creates the root on first use; raises
    OSError when not even the agent-dir fallback can be made."""
    return Path(process_capture_root().path)
