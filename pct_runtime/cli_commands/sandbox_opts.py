"""The sandbox start-up check of `pct serve` and `pct-tui` (their flags: `args.sandbox_args`).

The flags win over `pct.sandbox` in the configuration file. A mode this host cannot enforce
is a start-up error that says why and what to do: pct never serves unconfined after a
sandbox was asked for.
"""

from __future__ import annotations

from pathlib import Path

from pct_runtime.config.store import read_document
from pct_runtime.host.system.sandbox import (
    SandboxConfigError,
    SandboxSettings,
    resolve_settings,
    settings_from_config,
    unsupported_reason,
)


class SandboxStartError(RuntimeError):
    """The requested sandbox cannot be used; `str()` is the whole message for stderr."""


def startup_sandbox(
    flag_mode: str | None, flag_network: bool, config_path: Path
) -> tuple[SandboxSettings, str | None]:
    """The settings to serve with, plus a warning to print (or None).

    Raises `SandboxStartError` when the configuration's value is invalid or the host cannot
    enforce the chosen mode.
    """
    document = read_document(config_path)
    warning = None
    try:
        configured = settings_from_config(document or {})
    except SandboxConfigError as exc:
        raise SandboxStartError(f"{config_path}: {exc}") from None
    if document is None and config_path.exists() and flag_mode is None:
        warning = (
            f"pct: warning: {config_path} could not be read, so a sandbox set there "
            "(pct.sandbox) is not applied; pass --sandbox MODE to choose one."
        )
    settings = resolve_settings(flag_mode, flag_network, configured)
    reason = unsupported_reason(settings)
    if reason is not None:
        raise SandboxStartError(f"cannot start with --sandbox {settings.mode}: {reason}")
    return settings, warning
