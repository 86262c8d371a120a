"""Read and save outcomes of the config store, with the spec's exact messages."""

from __future__ import annotations

from typing import Literal

from pct_runtime.datarecord import datarecord

ReadErrorCode = Literal["invalid-json", "invalid-config", "config-read-failed"]
SaveErrorCode = Literal["stale-revision", "lock-held", "unreadable", "write-failed"]

STALE_REVISION_MESSAGE = (
    "Could not save: the configuration file changed; reload and review the draft."
)
UNREADABLE_MESSAGE = "Refusing to overwrite an unreadable configuration file."
WRITE_FAILED_MESSAGE = (
    "Could not save Pi Codex Toolkit configuration; the existing file was left untouched."
)
_LOCK_ADVICE = (
    "If no other Pi process with this Toolkit is saving, remove that directory and retry."
)


@datarecord
class ConfigReadError:
    """Why the last read failed. `detail` is fixed text or an errno name, never file content.

    - `invalid-json`: not JSON; detail is the position (`line 3 column 5`), never the
      parser's message, which would quote the file;
    - `invalid-config`: the first invalid known field (`applyPatch.enabled must be true or false`);
    - `config-read-failed`: the file could not be read; detail is the errno name (`EACCES`).
    """

    code: ReadErrorCode
    detail: str | None = None

    def __str__(self) -> str:
        return self.code if self.detail is None else f"{self.code} ({self.detail})"


class ConfigSaveError(Exception):
    """A refused or failed save; the file was left untouched. `str()` is the user message."""

    def __init__(self, code: SaveErrorCode, message: str) -> None:
        super().__init__(message)
        self.code: SaveErrorCode = code
        self.message = message


def stale_revision_error() -> ConfigSaveError:
    return ConfigSaveError("stale-revision", STALE_REVISION_MESSAGE)


def unreadable_error() -> ConfigSaveError:
    return ConfigSaveError("unreadable", UNREADABLE_MESSAGE)


def write_failed_error() -> ConfigSaveError:
    return ConfigSaveError("write-failed", WRITE_FAILED_MESSAGE)


def lock_held_error(lock_path: str, owner_pid: int | None, running: bool) -> ConfigSaveError:
    """`lock-held`: names the lock directory and, when an owner record was read, its pid and
    whether that process still runs (what an operator needs before removing a leftover)."""
    if owner_pid is None:
        held = "exists but has no readable owner record"
    else:
        held = f"is held by pid {owner_pid} ({'running' if running else 'not running'})"
    return ConfigSaveError(
        "lock-held", f"Could not save: the configuration lock {lock_path} {held}. {_LOCK_ADVICE}"
    )


RELOADED_MESSAGE = "Pi Codex Toolkit configuration reloaded."


def reload_message(read_error: ConfigReadError | None, had_valid: bool) -> str:
    """The `/pct reload` text (also the session-start warning).

    `had_valid`: whether this process has read or saved a valid configuration before, so
    the last known good settings are in use rather than the all-off defaults.
    """
    if read_error is None:
        return RELOADED_MESSAGE
    settings = "last known good settings" if had_valid else "all-off defaults"
    return f"Pi Codex Toolkit config error: {read_error}; using {settings}."
