"""What a sandbox mode allows, independent of the kernel mechanism that enforces it.

The names are Codex's: `read-only`, `workspace-write`, `danger-full-access`. The policy is a
pure value (mode, network, writable roots) so status screens, tool descriptions and the
enforcing backends all read the same facts.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Literal, cast

from pct_runtime.config import pct_section
from pct_runtime.config.pct_section import SandboxConfigError as SandboxConfigError
from pct_runtime.datarecord import datarecord
from pct_runtime.jsontypes import JSONMapping

SandboxMode = Literal["read-only", "workspace-write", "danger-full-access"]
SANDBOX_MODES = cast(tuple[SandboxMode, ...], pct_section.SANDBOX_MODES)
DEFAULT_MODE = cast(SandboxMode, pct_section.DEFAULT_SANDBOX_MODE)

#: Where pct's own configuration keeps its sandbox choice: `{"pct": {"sandbox": {...}}}`.
#: Pi does not know the `pct` key and keeps it on save, as the spec requires for unknown keys.
CONFIG_SECTION = (pct_section.PCT_SECTION, "sandbox")

#: Device files every confined job may write (their writes go nowhere on disk).
WRITABLE_DEVICES: tuple[str, ...] = (
    "/dev/null",
    "/dev/zero",
    "/dev/full",
    "/dev/tty",
    "/dev/ptmx",
    "/dev/pts",
)


@datarecord
class SandboxSettings:
    """The operator's choice: a mode and whether confined jobs keep outbound network."""

    mode: SandboxMode = DEFAULT_MODE
    network: bool = False

    @property
    def confined(self) -> bool:
        return self.mode != "danger-full-access"

    @property
    def network_allowed(self) -> bool:
        return not self.confined or self.network

    def label(self) -> str:
        """One line for headers and status: `workspace-write, network off`."""
        if not self.confined:
            return "danger-full-access (no sandbox)"
        return f"{self.mode}, network {'on' if self.network else 'off'}"


def temp_roots(env: Mapping[str, str] | None = None) -> tuple[Path, ...]:
    """The temp directories a `workspace-write` job may write: $TMPDIR and the OS temp dir.

    pct's own capture folder (`pct-output-*`) lives in the OS temp dir; jobs never need to
    write it (pct writes it from outside the sandbox), but it is covered either way.
    """
    import tempfile  # deferred: it loads shutil (with bz2 and lzma); most modes never ask

    environ = os.environ if env is None else env
    roots: list[Path] = []
    for candidate in (environ.get("TMPDIR"), tempfile.gettempdir()):
        if candidate and os.path.isabs(candidate):
            path = Path(os.path.realpath(candidate))
            if path not in roots:
                roots.append(path)
    return tuple(roots)


def writable_roots(settings: SandboxSettings, cwd: Path) -> tuple[Path, ...]:
    """The directory trees a job may write under `settings` (devices not included).

    Empty for `read-only`; the session's working directory plus the temp roots for
    `workspace-write`; `/` for `danger-full-access`.
    """
    if settings.mode == "danger-full-access":
        return (Path("/"),)
    if settings.mode == "read-only":
        return ()
    roots = [Path(os.path.realpath(cwd))]
    roots += [root for root in temp_roots() if root not in roots]
    return tuple(roots)


def masked_dirs() -> tuple[Path, ...]:
    """Directories a job may neither read nor write: pct's state (token, journal, registry).

    Created (0700) when missing, so a job cannot plant one under a writable root before pct
    makes its own.
    """
    from pct_runtime.config.paths import agent_dir  # deferred: `pct --help` never asks

    state = agent_dir() / "pct"
    try:
        state.mkdir(mode=0o700, parents=True, exist_ok=True)
    except OSError:
        return ()
    return (Path(os.path.realpath(state)),)


def settings_from_config(raw: JSONMapping) -> SandboxSettings | None:
    """`pct.sandbox` from a raw configuration document; None when the file sets nothing.

    Raises `SandboxConfigError` naming the field and what it must be (never the value).
    """
    fields = pct_section.sandbox_fields(raw)
    if fields is None:
        return None
    return SandboxSettings(cast(SandboxMode, fields.mode), fields.network)


def resolve_settings(
    flag_mode: str | None, flag_network: bool, config: SandboxSettings | None
) -> SandboxSettings:
    """Command-line flags win over the configuration file, which wins over the default."""
    base = config or SandboxSettings()
    mode = cast(SandboxMode, flag_mode) if flag_mode is not None else base.mode
    return SandboxSettings(mode, flag_network or base.network)
