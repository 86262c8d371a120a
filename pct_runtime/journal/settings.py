"""`pct.journal` in the configuration file: on/off and the retention limits.

Read from the raw document (like `pct.sandbox`), so `pct apply-patch` journals its patch
without loading the config schema; `config.pct_section` (the validation) loads only when a
configuration file is there to validate, and `typing` not at all. Defaults: on, 100 MiB,
30 days (`config.pct_section`'s, which a test keeps equal).
"""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Mapping

from pct_runtime.host.system.folders import path_text
from pct_runtime.tuples import NamedTuple

TYPE_CHECKING = False  # `typing` stays unloaded on `pct apply-patch` (see pct_runtime.tuples)
if TYPE_CHECKING:
    from pathlib import Path

    from pct_runtime.config.pct_section import JournalConfigError as JournalConfigError
    from pct_runtime.jsontypes import JSONMapping

#: `config.pct_section`'s PCT_SECTION and journal defaults, spelled here so that reading
#: them does not load it (tests/journal/test_journal_settings.py keeps them equal).
CONFIG_SECTION = ("pct", "journal")
DEFAULT_MAX_BYTES = 104_857_600
DEFAULT_MAX_AGE_DAYS = 30.0
_CONFIG_FILE = ("extensions", "pi-codex-toolkit.json")

__all__ = [
    "JournalConfigError",
    "JournalSettings",
    "agent_dir_from_env",
    "settings_for",
    "settings_from_config",
]


class JournalSettings(NamedTuple):
    """The journal's settings (a named tuple: `pct apply-patch` loads no dataclasses)."""

    enabled: bool = True
    max_bytes: int = DEFAULT_MAX_BYTES
    max_age_days: float = DEFAULT_MAX_AGE_DAYS
    #: Why the journal is off (`pct log` and `pct undo` say it), empty while on.
    off_reason: str = ""


def __getattr__(name: str) -> object:
    # `JournalConfigError` is `config.pct_section`'s, loaded when first asked for.
    if name == "JournalConfigError":
        from pct_runtime.config.pct_section import JournalConfigError

        return JournalConfigError
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def settings_from_config(raw: JSONMapping) -> JournalSettings:
    """`pct.journal` from a raw configuration document (defaults for what it leaves out).

    Raises `JournalConfigError` naming the field and what it must be."""
    from pct_runtime.config import pct_section

    fields = pct_section.journal_fields(raw)
    return JournalSettings(fields.enabled, fields.max_bytes, fields.max_age_days)


def agent_dir_from_env(env: Mapping[str, str] | None = None) -> Path:
    """Pi's agent dir, exactly as `config.paths.agent_dir` resolves it (a test keeps the two
    equal): importing `pct_runtime.config` would load the config schema on
    `pct apply-patch`'s path."""
    from pathlib import Path

    return Path(agent_dir_name_from_env(env))


def agent_dir_name_from_env(env: Mapping[str, str] | None = None) -> str:
    """`str(agent_dir_from_env(env))`, without pathlib (with `urllib.parse` and `ipaddress`
    under it, ~4 ms of a `pct apply-patch` process; a test keeps the two equal)."""
    environ = os.environ if env is None else env
    configured = environ.get("PI_CODING_AGENT_DIR", "")
    home = os.path.expanduser("~")  # what `Path.home()` reads
    if home == "~":
        raise RuntimeError("Could not determine home directory.")  # as `Path.home()` does
    if not configured:
        return path_text(home, ".pi", "agent")
    if configured == "~":
        return path_text(home)
    if configured.startswith("~/"):
        return path_text(home, configured[2:])
    return path_text(configured)


def settings_for(agent_dir: str | os.PathLike[str]) -> JournalSettings:
    """The settings of `agent_dir`'s configuration file; defaults when it is missing or
    unreadable (a broken file is reported by `pct status`, not by the journal), and
    the journal off when `pct.journal` itself is invalid (never guess at limits).
    When the journal is off, `off_reason` names the field (the file is the caller's to add)."""
    try:
        raw = json.loads(_read_regular(os.path.join(agent_dir, *_CONFIG_FILE)))
    except (OSError, ValueError):
        return JournalSettings()
    if not isinstance(raw, dict):
        return JournalSettings()
    from pct_runtime.config.pct_section import JournalConfigError

    try:
        settings = settings_from_config(raw)
    except JournalConfigError as exc:
        return JournalSettings(enabled=False, off_reason=str(exc))
    if not settings.enabled:
        where = ".".join(CONFIG_SECTION)
        reason = f"{where}.enabled is false"
        return JournalSettings(False, settings.max_bytes, settings.max_age_days, reason)
    return settings


def config_file(agent_dir: Path) -> Path:
    from pathlib import Path

    return Path(agent_dir).joinpath(*_CONFIG_FILE)


def state_problem(agent_dir: Path, *, create: bool = True) -> str | None:
    """Why pct cannot keep its state (journal, live-control registry) in `<agent dir>/pct`:
    it cannot be made, is on a read-only file system or is not writable; None when it can.
    Makes the folder (0700) when missing and `create`; else a missing one is judged by the
    agent dir that would hold it (None when that is missing too)."""
    path = agent_dir / "pct"
    if create:
        try:
            os.makedirs(path, mode=0o700, exist_ok=True)
        except OSError as exc:
            return f"{path} cannot be made ({exc.strerror or exc})"
    elif not os.path.isdir(path):
        if not os.path.isdir(agent_dir):
            return None
        problem = _unwritable(agent_dir)
        return f"{path} cannot be made ({problem})" if problem else None
    problem = _unwritable(path)
    return f"{path} is {problem}" if problem else None


def _unwritable(path: Path) -> str | None:
    try:
        if os.statvfs(path).f_flag & os.ST_RDONLY:
            return "on a read-only file system"
    except (OSError, AttributeError):
        pass
    if not os.access(path, os.W_OK | os.X_OK, effective_ids=os.access in os.supports_effective_ids):
        return "not writable by this user"
    return None


def _read_regular(path: str) -> bytes:
    """A regular file's bytes; a FIFO or device raises at once (never a blocking open)."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    with os.fdopen(fd, "rb") as handle:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise OSError(f"{path} is not a regular file")
        return handle.read()
