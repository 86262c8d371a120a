"""`pct.journal` in the configuration file: on/off and the retention limits.

Read from the raw document (like `pct.sandbox`), so `pct apply-patch` journals its patch
without loading the config schema. Defaults: on, 100 MiB, 30 days.
"""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from pct_runtime.config import pct_section
from pct_runtime.config.pct_section import JournalConfigError
from pct_runtime.jsontypes import JSONMapping

CONFIG_SECTION = (pct_section.PCT_SECTION, "journal")
DEFAULT_MAX_BYTES = pct_section.DEFAULT_JOURNAL_MAX_BYTES
DEFAULT_MAX_AGE_DAYS = pct_section.DEFAULT_JOURNAL_MAX_AGE_DAYS
_CONFIG_FILE = ("extensions", "pi-codex-toolkit.json")

__all__ = [
    "JournalConfigError",
    "JournalSettings",
    "agent_dir_from_env",
    "off_reason",
    "settings_and_reason",
    "settings_for",
    "settings_from_config",
]


@dataclass(frozen=True)
class JournalSettings:
    enabled: bool = True
    max_bytes: int = DEFAULT_MAX_BYTES
    max_age_days: float = DEFAULT_MAX_AGE_DAYS


def settings_from_config(raw: JSONMapping) -> JournalSettings:
    """`pct.journal` from a raw configuration document (defaults for what it leaves out).

    Raises `JournalConfigError` naming the field and what it must be."""
    fields = pct_section.journal_fields(raw)
    return JournalSettings(fields.enabled, fields.max_bytes, fields.max_age_days)


def agent_dir_from_env(env: Mapping[str, str] | None = None) -> Path:
    """Pi's agent dir, exactly as `config.paths.agent_dir` resolves it (a test keeps the two
    equal): importing `pct_runtime.config` would load the config schema and pydantic on
    `pct apply-patch`'s path."""
    environ = os.environ if env is None else env
    configured = environ.get("PI_CODING_AGENT_DIR", "")
    if not configured:
        return Path.home() / ".pi" / "agent"
    if configured == "~":
        return Path.home()
    if configured.startswith("~/"):
        return Path.home() / configured[2:]
    return Path(configured)


def settings_for(agent_dir: Path) -> JournalSettings:
    """The settings of `agent_dir`'s configuration file (see `settings_and_reason`)."""
    return settings_and_reason(agent_dir)[0]


def settings_and_reason(agent_dir: Path) -> tuple[JournalSettings, str | None]:
    """The settings of `agent_dir`'s configuration file and, when the journal is off, why.

    Defaults when the file is missing or unreadable (a broken file is reported by
    `pct status`, not by the journal); the journal off when `pct.journal` itself is
    invalid (never guess at limits); the reason names the field.
    """
    try:
        raw = json.loads(_read_regular(agent_dir.joinpath(*_CONFIG_FILE)))
    except (OSError, ValueError):
        return JournalSettings(), None
    if not isinstance(raw, dict):
        return JournalSettings(), None
    try:
        settings = settings_from_config(raw)
    except JournalConfigError as exc:
        return JournalSettings(enabled=False), str(exc)
    if not settings.enabled:
        return settings, "pct.journal.enabled is false"
    return settings, None


def off_reason(agent_dir: Path) -> str | None:
    """Why `agent_dir`'s journal records nothing now (the field and its rule, or
    `pct.journal.enabled is false`), or None when it is on."""
    return settings_and_reason(agent_dir)[1]


def _read_regular(path: Path) -> bytes:
    """A regular file's bytes; a FIFO or device raises at once (never a blocking open)."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    with os.fdopen(fd, "rb") as handle:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise OSError(f"{path} is not a regular file")
        return handle.read()
