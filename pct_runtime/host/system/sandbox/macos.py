"""macOS enforcement: `sandbox-exec` with a generated Seatbelt profile, as Codex does.

The profile allows everything except: file writes outside the writable roots, metadata
changes there too (mode, owner, set-uid bits, times, xattrs, flags), the terminals
(`/dev/ttys*`, `/dev/pty*`: no reading, writing or TIOCSTI into the user's shells), pct's
own state (`<agent dir>/pct/`, neither read nor written) and, with network off, every
network operation including Unix-domain sockets. Paths are passed as `-D` parameters, so
none is ever quoted into the profile text. The job's argv is prefixed; descendants inherit
the profile.
"""

from __future__ import annotations

import os
from pathlib import Path

from pct_runtime.host.system.sandbox.policy import WRITABLE_DEVICES, SandboxSettings, masked_dirs

SANDBOX_EXEC = "/usr/bin/sandbox-exec"


def unsupported_reason(settings: SandboxSettings) -> str | None:
    if settings.confined and not os.access(SANDBOX_EXEC, os.X_OK):
        return (
            f"{SANDBOX_EXEC} is missing, so --sandbox {settings.mode} cannot be enforced. "
            "Pass --sandbox danger-full-access to run without a sandbox."
        )
    return None


#: Metadata operations `file-write*` covers; spelled out so they are refused even on the
#: devices a job may write.
_METADATA_OPS = (
    "file-write-mode",
    "file-write-owner",
    "file-write-setugid",
    "file-write-times",
    "file-write-xattr",
    "file-write-flags",
)
_TERMINALS = (
    '(regex #"^/dev/ttys[0-9]+$")',
    '(regex #"^/dev/tty[p-w][0-9a-f]$")',
    '(regex #"^/dev/pty")',
)


def profile(
    settings: SandboxSettings,
    roots: tuple[Path, ...],
    masks: tuple[Path, ...] = (),
    readable: tuple[Path, ...] = (),
) -> str:
    """The Seatbelt profile text; roots are `(param "WRITABLE_ROOT_<i>")`, masked
    directories `(param "MASKED_<i>")`, read-only trees `(param "READABLE_<i>")`."""
    inside = [f'(subpath (param "WRITABLE_ROOT_{i}"))' for i in range(len(roots))]
    allowed = [*inside]
    allowed += [f'(literal "{device}")' for device in WRITABLE_DEVICES if device != "/dev/pts"]
    outside_roots = f" (require-not (require-any {' '.join(inside)}))" if inside else ""
    lines = [
        "(version 1)",
        "(allow default)",
        "(deny file-write*)",
        f"(allow file-write* {' '.join(allowed)})",
        f"(deny {' '.join(_METADATA_OPS)}{outside_roots})",
        f"(deny file-read* file-write* file-ioctl {' '.join(_TERMINALS)})",
    ]
    if masks:
        hidden = " ".join(f'(subpath (param "MASKED_{i}"))' for i in range(len(masks)))
        lines.append(f"(deny file-read* file-write* {hidden})")
    if readable:
        # Later rules win: the capture root is readable even under a masked directory,
        # and never writable.
        trees = " ".join(f'(subpath (param "READABLE_{i}"))' for i in range(len(readable)))
        lines.append(f"(deny file-write* {trees})")
        lines.append(f"(allow file-read* {trees})")
    if not settings.network:
        lines.append("(deny network*)")
        # Unix-domain sockets are reached by path (journald, Docker, sd_notify).
        lines.append('(deny network-outbound network-bind (subpath "/"))')
    return "\n".join(lines) + "\n"


def wrap(
    settings: SandboxSettings,
    roots: tuple[Path, ...],
    argv: list[str],
    readable: tuple[Path, ...] = (),
) -> list[str]:
    masks = masked_dirs()
    params: list[str] = []
    for i, root in enumerate(roots):
        params += ["-D", f"WRITABLE_ROOT_{i}={root}"]
    for i, mask in enumerate(masks):
        params += ["-D", f"MASKED_{i}={mask}"]
    for i, tree in enumerate(readable):
        params += ["-D", f"READABLE_{i}={tree}"]
    text = profile(settings, roots, masks, readable)
    return [SANDBOX_EXEC, "-p", text, *params, "--", *argv]
