"""macOS enforcement: `sandbox-exec` with a generated Seatbelt profile, as Codex does.

The profile allows everything except file writes outside the writable roots (passed as
`-D` parameters, so no path is ever quoted into the profile text) and, with network off,
every network operation. The job's argv is prefixed; descendants inherit the profile.
"""

from __future__ import annotations

import os
from pathlib import Path

from pct_runtime.host.sandbox.policy import WRITABLE_DEVICES, SandboxSettings

SANDBOX_EXEC = "/usr/bin/sandbox-exec"


def unsupported_reason(settings: SandboxSettings) -> str | None:
    if settings.confined and not os.access(SANDBOX_EXEC, os.X_OK):
        return (
            f"{SANDBOX_EXEC} is missing, so --sandbox {settings.mode} cannot be enforced. "
            "Pass --sandbox danger-full-access to run without a sandbox."
        )
    return None


def profile(settings: SandboxSettings, roots: tuple[Path, ...]) -> str:
    """The Seatbelt profile text; roots are referenced as `(param "WRITABLE_ROOT_<i>")`."""
    allowed = [f'(subpath (param "WRITABLE_ROOT_{i}"))' for i in range(len(roots))]
    allowed += [f'(literal "{device}")' for device in WRITABLE_DEVICES if device != "/dev/pts"]
    allowed.append('(regex #"^/dev/ttys[0-9]+$")')
    lines = [
        "(version 1)",
        "(allow default)",
        "(deny file-write*)",
        f"(allow file-write* {' '.join(allowed)})",
    ]
    if not settings.network:
        lines.append("(deny network*)")
    return "\n".join(lines) + "\n"


def wrap(settings: SandboxSettings, roots: tuple[Path, ...], argv: list[str]) -> list[str]:
    params: list[str] = []
    for i, root in enumerate(roots):
        params += ["-D", f"WRITABLE_ROOT_{i}={root}"]
    return [SANDBOX_EXEC, "-p", profile(settings, roots), *params, "--", *argv]
