"""Unknown top-level keys are kept but warned about, with the nearest known key."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pct_runtime.cli import main
from pct_runtime.config import ConfigStore
from pct_runtime.config.typos import file_warnings, unknown_key_warnings


@pytest.fixture
def agent(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(tmp_path / "agent"))
    monkeypatch.delenv("PCT_TOKEN", raising=False)
    return tmp_path / "agent"


def write(agent: Path, document: object) -> Path:
    path = agent / "extensions" / "pi-codex-toolkit.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(document))
    return path


def test_nearest_known_key_is_named() -> None:
    assert unknown_key_warnings({"applyPach": {}, "DEBUG": True, "zzz": 1, "debug": False}) == [
        'unknown top-level key "applyPach" is ignored; did you mean applyPatch?',
        'unknown top-level key "DEBUG" is ignored; did you mean debug?',
        'unknown top-level key "zzz" is ignored',
    ]
    assert unknown_key_warnings({"webSearch": {}, "execution": {}, "toolDiscovery": {}}) == []


def test_file_warnings_ignore_missing_and_broken_files(tmp_path: Path) -> None:
    assert file_warnings(tmp_path / "none.json") == []
    (tmp_path / "bad.json").write_text("{")
    assert file_warnings(tmp_path / "bad.json") == []


def test_reload_warns_but_accepts_and_keeps_the_key(
    agent: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write(agent, {"applyPach": {"enabled": True}})
    assert main(["reload"]) == 0
    out, err = capsys.readouterr()
    assert out == "Pi Codex Toolkit configuration reloaded.\n"
    assert err == (
        'pct: warning: unknown top-level key "applyPach" is ignored; did you mean applyPatch?\n'
    )
    assert ConfigStore(path).read().raw == {"applyPach": {"enabled": True}}


def test_status_warns_on_stderr_and_keeps_stdout_exact(
    agent: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write(agent, {"shellSesions": {"enabled": True}})
    assert main(["status"]) == 0
    out, err = capsys.readouterr()
    assert "did you mean shellSessions?" in err
    assert "warning" not in out
