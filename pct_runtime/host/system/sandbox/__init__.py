"""Kernel-enforced sandbox for shell jobs and Code Mode workers (`--sandbox MODE`).

- `SandboxSettings(mode, network)`: the operator's choice (flags > `pct.sandbox` config).
- `unsupported_reason(settings)`: why this host cannot enforce it, checked at start-up; pct
  refuses to start rather than run unconfined after being asked for a sandbox.
- `Sandbox(settings, cwd)`: one session's confinement. Spawn sites go through `spawn.py`:
  Linux jobs start inside bubblewrap namespaces with Landlock and seccomp on top
  (`spawner()`), macOS ones behind `sandbox-exec` (`wrap(argv)`).
- `denial_note(...)`: the `Command denied by sandbox` line a failed confined command gets.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from pct_runtime.host.system.sandbox.policy import (
    CONFIG_SECTION,
    DEFAULT_MODE,
    SANDBOX_MODES,
    SandboxConfigError,
    SandboxMode,
    SandboxSettings,
    resolve_settings,
    settings_from_config,
    writable_roots,
)

if TYPE_CHECKING:
    from pct_runtime.host.system.sandbox.linux import LinuxConfinement
    from pct_runtime.host.system.sandbox.spawner import NamespaceSpawner

__all__ = [
    "CONFIG_SECTION",
    "DEFAULT_MODE",
    "SANDBOX_MODES",
    "Sandbox",
    "SandboxConfigError",
    "SandboxMode",
    "SandboxSettings",
    "SandboxUnavailableError",
    "denial_note",
    "enforcement",
    "looks_denied",
    "resolve_settings",
    "settings_from_config",
    "unsupported_reason",
    "writable_roots",
]


class SandboxUnavailableError(RuntimeError):
    """The requested sandbox cannot be enforced here; `str()` says why and what to do."""


def unsupported_reason(settings: SandboxSettings, *, self_test: bool = True) -> str | None:
    """Why `settings` cannot be enforced here, ending with what to do; None when it can.

    On Linux, `self_test` also confines a real `/bin/sh` once and checks a write is refused.
    """
    if not settings.confined:
        return None
    if sys.platform.startswith("linux"):
        from pct_runtime.host.system.sandbox import linux  # deferred: Linux only

        reason = linux.unsupported_reason(settings)
        if reason is None and self_test:
            reason = linux.self_test(settings)
        return reason
    if sys.platform == "darwin":
        from pct_runtime.host.system.sandbox import macos  # deferred: macOS only

        return macos.unsupported_reason(settings)
    return (
        f"--sandbox {settings.mode} is enforced only on Linux (Landlock, seccomp) and macOS "
        f"(sandbox-exec), not on {sys.platform}. Pass --sandbox danger-full-access."
    )


def enforcement(settings: SandboxSettings) -> str:
    """The mechanisms behind `settings` here, for status screens (bwrap is probed once)."""
    if not settings.confined:
        return "none"
    if sys.platform.startswith("linux"):
        from pct_runtime.host.system.sandbox.bwrap import probed  # deferred: Linux only
        from pct_runtime.host.system.sandbox.linux import landlock_abi

        found, failure = probed(settings.network)
        namespaces = found.label() if found is not None and failure is None else "no bubblewrap"
        return f"{namespaces} + Landlock ABI {landlock_abi()} + seccomp"
    if sys.platform == "darwin":
        return "sandbox-exec"
    return "unavailable"


class Sandbox:
    """One session's confinement: the settings plus the roots derived from its directory."""

    def __init__(self, settings: SandboxSettings, cwd: Path, readable: Sequence[Path] = ()) -> None:
        """`readable`: trees jobs may read but not write, even under a writable root or a
        masked one (pct's capture root)."""
        self.settings = settings
        self.roots = writable_roots(settings, cwd)
        self.readable = tuple(Path(os.path.realpath(p)) for p in readable)
        self._linux: LinuxConfinement | None = None
        if settings.confined and sys.platform.startswith("linux"):
            from pct_runtime.host.system.sandbox.linux import (
                confinement_for,  # deferred: Linux only
            )

            self._linux = confinement_for(settings, cwd, self.readable)

    @property
    def confined(self) -> bool:
        return self.settings.confined

    def child_hook(self) -> Callable[[], None] | None:
        """A `preexec_fn` that confines a forked child (Linux; None when not needed).

        Spawn sites use `spawn.spawn_process`/`spawn.popen`, which avoid a full fork.
        """
        return self._linux.apply_in_child if self._linux is not None else None

    def spawner(self) -> NamespaceSpawner | None:
        """The server that spawns this sandbox's processes in its namespaces (Linux), else
        None. Raises OSError when it cannot be set up (nothing runs unconfined)."""
        return self._linux.spawner() if self._linux is not None else None

    def wrap(self, argv: Sequence[str]) -> list[str]:
        """The argv to spawn: `argv` itself, or behind `sandbox-exec` on macOS."""
        if self.settings.confined and sys.platform == "darwin":
            from pct_runtime.host.system.sandbox import macos  # deferred: macOS only

            return macos.wrap(self.settings, self.roots, list(argv), self.readable)
        return list(argv)

    def summary(self) -> str:
        """For tool descriptions: what a command may touch, in one or two sentences."""
        return describe(self.settings, self.roots)


def describe(settings: SandboxSettings, roots: Sequence[Path]) -> str:
    if not settings.confined:
        return "no sandbox (danger-full-access): it runs with the user's own permissions"
    where = (
        "nowhere (read-only)"
        if not roots
        else "only under " + ", ".join(str(root) for root in roots)
    )
    network = "allowed" if settings.network else "blocked"
    return (
        f"a kernel sandbox ({settings.mode}): it can read any file but write {where}; "
        f"outbound network is {network}"
    )


_DENIAL_MARKERS = (
    "permission denied",
    "operation not permitted",
    "read-only file system",
    "pct sandbox:",
)


def looks_denied(settings: SandboxSettings, returncode: int | None, output: str) -> bool:
    """Codex's heuristic: a confined command that failed and printed an access error."""
    if not settings.confined or returncode is None or returncode == 0:
        return False
    lowered = output.lower()
    return any(marker in lowered for marker in _DENIAL_MARKERS)


def denial_note(settings: SandboxSettings, roots: Sequence[Path]) -> str:
    """The line added to a result that `looks_denied`: what was refused and what to do."""
    return (
        f"Command denied by sandbox: {describe(settings, roots)}. The command failed with an "
        "access error, which under this sandbox almost always means it tried to write outside "
        "the writable roots or to open a network connection. Do not retry it another way; "
        "work inside the writable roots, or tell the user that it needs a wider --sandbox mode."
    )
