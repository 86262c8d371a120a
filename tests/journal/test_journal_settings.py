"""`pct.journal` in the configuration file: defaults, limits, invalid values."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from pct_runtime.config.paths import agent_dir
from pct_runtime.config.typos import PCT_SECTION
from pct_runtime.journal.settings import (
    CONFIG_SECTION,
    JournalConfigError,
    JournalSettings,
    agent_dir_from_env,
    agent_dir_name_from_env,
    settings_for,
    settings_from_config,
)


def test_section_is_pcts_own() -> None:
    assert CONFIG_SECTION[0] == PCT_SECTION


def test_constants_are_the_config_sections() -> None:
    """settings.py spells them so that reading them does not load config.pct_section."""
    from pct_runtime.config import pct_section
    from pct_runtime.journal import settings

    assert settings.CONFIG_SECTION == (pct_section.PCT_SECTION, "journal")
    assert settings.DEFAULT_MAX_BYTES == pct_section.DEFAULT_JOURNAL_MAX_BYTES
    assert settings.DEFAULT_MAX_AGE_DAYS == pct_section.DEFAULT_JOURNAL_MAX_AGE_DAYS
    assert settings.JournalConfigError is pct_section.JournalConfigError


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


@pytest.mark.parametrize("value", ["", "~", "~/x/agent", "/abs/agent", "rel/agent", "~user/a"])
def test_agent_dir_is_resolved_as_the_config_resolves_it(value: str) -> None:
    env = {"PI_CODING_AGENT_DIR": value} if value else {}
    assert agent_dir_from_env(env) == agent_dir(env)
    assert agent_dir_name_from_env(env) == str(agent_dir(env))  # `pct apply-patch`'s string


def test_pct_apply_patch_with_the_journal_never_loads_the_config_schema(tmp_path: Path) -> None:
    """The journal rides on `pct apply-patch` without making it load pydantic."""
    import subprocess
    import sys

    work = tmp_path / "work"
    work.mkdir()
    probe = (
        "import sys, io; from pct_runtime.cli import main; "
        "sys.stdin = io.TextIOWrapper(io.BytesIO(b'*** Begin Patch\\n*** Add File: a\\n+x\\n"
        "*** End Patch\\n')); "
        f"code = main(['apply-patch', '--cwd', {str(work)!r}]); "
        "print(code, 'pydantic' in sys.modules, 'pct_runtime.config.schema' in sys.modules)"
    )
    env = {**os.environ, "PI_CODING_AGENT_DIR": str(tmp_path / "agent")}
    out = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True, env=env
    ).stdout
    assert out.split()[-3:] == ["0", "False", "False"]
    assert list((tmp_path / "agent" / "pct" / "journal-spool").glob("c-*.json"))
