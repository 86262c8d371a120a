"""`pct.journal` in the configuration file: defaults, limits, invalid values."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from pct_runtime.config.typos import PCT_SECTION
from pct_runtime.journal.settings import (
    CONFIG_SECTION,
    JournalConfigError,
    JournalSettings,
    settings_for,
    settings_from_config,
)


def test_section_is_pcts_own() -> None:
    assert CONFIG_SECTION[0] == PCT_SECTION


def test_defaults_are_on_100_mib_30_days() -> None:
    assert settings_from_config({}) == JournalSettings(True, 104_857_600, 30.0)
    assert settings_from_config({"pct": {"sandbox": {}}}) == JournalSettings()


def test_values_are_read() -> None:
    raw = {"pct": {"journal": {"enabled": False, "maxBytes": 2_000_000, "maxAgeDays": 7}}}
    assert settings_from_config(raw) == JournalSettings(False, 2_000_000, 7.0)


@pytest.mark.parametrize(
    ("section", "field"),
    [
        ({"enabled": "yes"}, "pct.journal.enabled"),
        ({"maxBytes": 10}, "pct.journal.maxBytes"),
        ({"maxBytes": True}, "pct.journal.maxBytes"),
        ({"maxAgeDays": 0}, "pct.journal.maxAgeDays"),
    ],
)
def test_invalid_values_name_the_field(section: dict[str, object], field: str) -> None:
    with pytest.raises(JournalConfigError, match=field):
        settings_from_config({"pct": {"journal": section}})


def test_file_reading(tmp_path: Path) -> None:
    assert settings_for(tmp_path) == JournalSettings()  # no file: defaults
    config = tmp_path / "extensions" / "pi-codex-toolkit.json"
    config.parent.mkdir()
    config.write_text(json.dumps({"pct": {"journal": {"maxBytes": "big"}}}))
    assert settings_for(tmp_path).enabled is False  # never guess at limits
    config.unlink()
    os.mkfifo(config)  # a FIFO never blocks the reader
    assert settings_for(tmp_path) == JournalSettings()
