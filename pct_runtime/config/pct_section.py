"""pct's own section of the configuration file: `{"pct": {"sandbox": ..., "journal": ...}}`.

The spec does not know `pct` (Pi keeps it on save as an unknown field); pct validates it as
strictly as the spec's fields, with the same `<field> must <requirement>` text, so that
`pct reload`, `pct status`, the console and `pct serve` all say what is wrong in one way.
This module stays free of the schema: `pct apply-patch` reads
`pct.sandbox` and `pct.journal` through it on its short path.

Each subsection is one row of `SUBSECTIONS` (its key, its known fields with their defaults,
and its parser). A new subsection adds a row; its parser raises a `PctSettingError`
subclass naming the field.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from pct_runtime.config.commands import DEFAULT_COMMAND_DECISION, commands_fields
from pct_runtime.config.pct_section_base import PCT_SECTION, PctSettingError, subsection
from pct_runtime.datarecord import datarecord
from pct_runtime.jsontypes import JSONMapping, JSONObject

__all__ = ["PCT_SECTION", "PctSettingError", "subsection"]

SANDBOX_MODES: tuple[str, ...] = ("read-only", "workspace-write", "danger-full-access")
DEFAULT_SANDBOX_MODE = "danger-full-access"
DEFAULT_JOURNAL_MAX_BYTES = 104_857_600
MIN_JOURNAL_MAX_BYTES = 1_048_576
DEFAULT_JOURNAL_MAX_AGE_DAYS = 30.0


class SandboxConfigError(PctSettingError):
    """`pct.sandbox` has a value pct cannot use."""


class JournalConfigError(PctSettingError):
    """`pct.journal` has a value pct cannot use."""


@datarecord
class SandboxFields:
    mode: str = DEFAULT_SANDBOX_MODE
    network: bool = False


@datarecord
class JournalFields:
    enabled: bool = True
    max_bytes: int = DEFAULT_JOURNAL_MAX_BYTES
    max_age_days: float = DEFAULT_JOURNAL_MAX_AGE_DAYS


def sandbox_fields(raw: JSONMapping) -> SandboxFields | None:
    """`pct.sandbox` of a raw document; None when the file sets nothing there."""
    section = subsection(raw, "sandbox", SandboxConfigError)
    if section is None:
        return None
    mode = section.get("mode", DEFAULT_SANDBOX_MODE)
    if not isinstance(mode, str) or mode not in SANDBOX_MODES:
        raise SandboxConfigError("pct.sandbox.mode", f"be one of {', '.join(SANDBOX_MODES)}")
    network = section.get("network", False)
    if not isinstance(network, bool):
        raise SandboxConfigError("pct.sandbox.network", "be true or false")
    return SandboxFields(mode, network)


def journal_fields(raw: JSONMapping) -> JournalFields:
    """`pct.journal` of a raw document (defaults for what it leaves out)."""
    section = subsection(raw, "journal", JournalConfigError)
    if section is None:
        return JournalFields()
    enabled = section.get("enabled", True)
    if not isinstance(enabled, bool):
        raise JournalConfigError("pct.journal.enabled", "be true or false")
    max_bytes = section.get("maxBytes", DEFAULT_JOURNAL_MAX_BYTES)
    if (
        isinstance(max_bytes, bool)
        or not isinstance(max_bytes, int)
        or max_bytes < MIN_JOURNAL_MAX_BYTES
    ):
        raise JournalConfigError(
            "pct.journal.maxBytes", f"be an integer of at least {MIN_JOURNAL_MAX_BYTES}"
        )
    max_age = section.get("maxAgeDays", DEFAULT_JOURNAL_MAX_AGE_DAYS)
    if isinstance(max_age, bool) or not isinstance(max_age, int | float) or max_age <= 0:
        raise JournalConfigError("pct.journal.maxAgeDays", "be a number greater than 0")
    return JournalFields(enabled, max_bytes, float(max_age))


@datarecord
class Subsection:
    """One subsection of `pct`: its key, its known fields with their defaults (what
    `pct config show` prints and the typo check knows) and its parser."""

    key: str
    defaults: JSONObject
    parse: Callable[[JSONMapping], object]


SUBSECTIONS: tuple[Subsection, ...] = (
    Subsection("sandbox", {"mode": DEFAULT_SANDBOX_MODE, "network": False}, sandbox_fields),
    Subsection(
        "journal",
        {
            "enabled": True,
            "maxBytes": DEFAULT_JOURNAL_MAX_BYTES,
            "maxAgeDays": DEFAULT_JOURNAL_MAX_AGE_DAYS,
        },
        journal_fields,
    ),
    Subsection("commands", {"default": DEFAULT_COMMAND_DECISION, "rules": []}, commands_fields),
)


def check_pct_section(raw: JSONMapping) -> None:
    """Validate the whole `pct` section; raises the first failing field's `PctSettingError`."""
    if PCT_SECTION in raw and not isinstance(raw[PCT_SECTION], Mapping):
        raise PctSettingError(PCT_SECTION, "be an object")
    for row in SUBSECTIONS:
        row.parse(raw)


def pct_section_error(raw: JSONMapping) -> PctSettingError | None:
    """The first invalid field of the `pct` section, or None."""
    try:
        check_pct_section(raw)
    except PctSettingError as exc:
        return exc
    return None


def known_fields() -> JSONObject:
    """Every known key of the `pct` section with its default: `{"sandbox": {...}, ...}`."""
    return {row.key: dict(row.defaults) for row in SUBSECTIONS}


def effective_section(raw: JSONMapping) -> JSONObject:
    """The `pct` section as pct uses it: the file's values over the defaults, unknown keys
    kept where they are. Only for a document `check_pct_section` accepted."""
    stored = raw.get(PCT_SECTION)
    section: JSONObject = dict(stored) if isinstance(stored, Mapping) else {}
    for row in SUBSECTIONS:
        current = section.get(row.key)
        merged: JSONObject = dict(current) if isinstance(current, Mapping) else {}
        for key, default in row.defaults.items():
            merged.setdefault(key, default)
        section[row.key] = merged
    return section
