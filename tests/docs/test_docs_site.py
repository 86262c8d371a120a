"""The docs site's generated pages: fresh, and covering every key `pct config show` prints."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import pytest

from tests.e2e.pct_procs import PCT, child_env, write_config

ROOT = Path(__file__).resolve().parent.parent.parent


def _gen_docs() -> ModuleType:
    spec = importlib.util.spec_from_file_location("gen_docs", ROOT / "scripts" / "gen_docs.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclass looks its module up while being made
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def gen_docs() -> ModuleType:
    return _gen_docs()


def test_committed_pages_are_what_the_code_generates(gen_docs: ModuleType) -> None:
    for path, text in gen_docs.pages().items():
        assert path.read_text() == text, (
            f"{path.relative_to(ROOT)} is stale: run python scripts/gen_docs.py"
        )


def _paths(value: object, prefix: str = "") -> Iterator[str]:
    if isinstance(value, dict):
        for key, child in value.items():
            path = f"{prefix}.{key}" if prefix else key
            yield path
            yield from _paths(child, path)
    elif isinstance(value, list):
        for item in value:
            if isinstance(item, dict):
                yield from _paths(item, f"{prefix}[]")


def test_reference_covers_every_key_pct_config_show_prints(
    gen_docs: ModuleType, tmp_path: Path
) -> None:
    # Every optional part present, so `show` prints each key it knows at least once.
    write_config(
        tmp_path,
        {
            "webSearch": {
                "enabled": True,
                "sidecarModel": {"provider": "openai-codex", "model": "gpt-5.4"},
            },
            "codeMode": {"enabled": True, "approvalMode": "always"},
            "execution": {
                "version": 1,
                "rules": [{"id": "all", "match": "*", "patch": True, "shell": True, "code": False}],
            },
            "pct": {
                "sandbox": {"mode": "workspace-write", "network": False},
                "journal": {"enabled": True, "maxBytes": 2_000_000, "maxAgeDays": 7},
            },
        },
    )
    shown = subprocess.run(
        [PCT, "config", "show"],
        env=child_env(tmp_path),
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    printed = set(_paths(json.loads(shown.stdout)))
    documented = {key.path for key in gen_docs.config_keys()}
    assert printed - documented == set()
    page = gen_docs.CONFIG_PAGE.read_text()
    for path in printed:
        assert f"| `{path}` |" in page


def test_a_key_without_a_meaning_stops_the_generator(
    gen_docs: ModuleType, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delitem(gen_docs.MEANINGS, "codeMode.approvalMode")
    with pytest.raises(SystemExit, match=r"codeMode\.approvalMode"):
        gen_docs.render_config()


def test_check_mode_reports_a_stale_page(
    gen_docs: ModuleType, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    stale = tmp_path / "cli.md"
    stale.write_text("# old\n")
    monkeypatch.setattr(gen_docs, "CLI_PAGE", stale)
    monkeypatch.setattr(gen_docs, "ROOT", tmp_path)
    assert gen_docs.main(["--check"]) == 1
    assert stale.read_text() == "# old\n"  # --check never writes


def test_defaults_in_the_reference_match_the_raw_pct_parsers(gen_docs: ModuleType) -> None:
    from pct_runtime.host.system.sandbox.policy import settings_from_config as sandbox_settings
    from pct_runtime.journal.settings import settings_from_config as journal_settings

    keys = {key.path: key for key in gen_docs.config_keys()}
    sandbox = sandbox_settings({"pct": {"sandbox": {}}})
    journal = journal_settings({"pct": {"journal": {}}})
    assert sandbox is not None
    assert keys["pct.sandbox.mode"].default == json.dumps(sandbox.mode).join("``")
    assert keys["pct.sandbox.network"].default == f"`{json.dumps(sandbox.network)}`"
    assert keys["pct.journal.maxBytes"].default == f"`{journal.max_bytes}`"
    assert keys["pct.journal.maxAgeDays"].default == f"`{json.dumps(journal.max_age_days)}`"


def _pct_sections() -> set[str]:
    """Every `pct.<name>` subsection pct parses: the one table of them."""
    from pct_runtime.config.pct_section import PCT_SECTION, SUBSECTIONS

    return {f"{PCT_SECTION}.{row.key}" for row in SUBSECTIONS}


def test_reference_documents_every_pct_section_a_module_parses(gen_docs: ModuleType) -> None:
    sections = _pct_sections()
    assert {"pct.sandbox", "pct.journal"} <= sections
    documented = {key.path for key in gen_docs.config_keys()}
    assert sections - documented == set()
