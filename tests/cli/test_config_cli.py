"""`pct config path`, `pct config show` and `pct reload` against a real agent dir."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from pct_runtime.cli import main
from pct_runtime.config import default_config, to_json_obj
from pct_runtime.config.paths import agent_dir, config_path

PCT_DEFAULTS = {
    "pct": {
        "sandbox": {"mode": "danger-full-access", "network": False},
        "journal": {"enabled": True, "maxBytes": 104857600, "maxAgeDays": 30.0},
        "commands": {"default": "allow", "rules": []},
    }
}


@pytest.fixture
def agent(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(tmp_path / "agent"))
    return tmp_path / "agent"


def config_file(agent: Path, text: str) -> Path:
    path = agent / "extensions" / "pi-codex-toolkit.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def test_agent_dir_resolution(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    assert agent_dir({}) == tmp_path / ".pi" / "agent"
    assert agent_dir({"PI_CODING_AGENT_DIR": ""}) == tmp_path / ".pi" / "agent"
    assert agent_dir({"PI_CODING_AGENT_DIR": "~"}) == tmp_path
    assert agent_dir({"PI_CODING_AGENT_DIR": "~/pi"}) == tmp_path / "pi"
    assert agent_dir({"PI_CODING_AGENT_DIR": "/srv/pi"}) == Path("/srv/pi")
    assert config_path({"PI_CODING_AGENT_DIR": "/srv/pi"}) == Path(
        "/srv/pi/extensions/pi-codex-toolkit.json"
    )


def test_config_path(agent: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["config", "path"]) == 0
    assert capsys.readouterr().out == f"{agent}/extensions/pi-codex-toolkit.json\n"


def test_reload_missing_file_succeeds_without_writing(
    agent: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["reload"]) == 0
    out = capsys.readouterr()
    assert out.out == "Pi Codex Toolkit configuration reloaded.\n"
    assert out.err == ""
    assert not agent.exists()


def test_reload_invalid_config(agent: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = config_file(agent, '{"applyPatch":{"enabled":"yes"}}')
    assert main(["reload"]) == 1
    out = capsys.readouterr()
    assert out.out == ""
    assert out.err == (
        "Pi Codex Toolkit config error: invalid-config (applyPatch.enabled must be true or "
        "false); using all-off defaults.\n"
    )
    assert path.read_text() == '{"applyPatch":{"enabled":"yes"}}'


def test_reload_invalid_json_and_read_failure(
    agent: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config_file(agent, "{secret")
    assert main(["reload"]) == 1
    err = capsys.readouterr().err
    assert err == (
        "Pi Codex Toolkit config error: invalid-json (line 1 column 2); using all-off defaults.\n"
    )
    assert "secret" not in err
    path = agent / "extensions" / "pi-codex-toolkit.json"
    path.unlink()
    path.mkdir()
    assert main(["reload"]) == 1
    assert capsys.readouterr().err == (
        "Pi Codex Toolkit config error: config-read-failed (EISDIR); using all-off defaults.\n"
    )


def test_config_show_fills_defaults_and_keeps_unknown_fields(
    agent: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config_file(agent, '{"futureRoot":{"a":1},"webSearch":{"enabled":true,"futureNested":2}}')
    assert main(["config", "show"]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert shown["futureRoot"] == {"a": 1}
    assert shown["webSearch"] == {
        "enabled": True,
        "futureNested": 2,
        "backend": "auto",
        "mode": "live",
        "contextSize": "medium",
        "sidecarModel": None,
    }
    assert shown["toolDiscovery"]["deferred"][0] == "openai_generate_image"
    assert shown["debug"] is False


def test_config_show_without_a_file_is_the_default_document(
    agent: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["config", "show"]) == 0
    assert json.loads(capsys.readouterr().out) == {**to_json_obj(default_config()), **PCT_DEFAULTS}


def test_config_show_invalid_file_prints_defaults_and_fails(
    agent: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config_file(agent, '{"debug": "yes"}')
    assert main(["config", "show"]) == 1
    out = capsys.readouterr()
    assert json.loads(out.out) == {**to_json_obj(default_config()), **PCT_DEFAULTS}
    assert out.err == (
        "Pi Codex Toolkit config error: invalid-config (debug must be true or false); "
        "using all-off defaults.\n"
    )


def test_pct_entry_point_runs_in_a_subprocess(agent: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "pct_runtime.cli", "reload"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert (done.returncode, done.stdout, done.stderr) == (
        0,
        "Pi Codex Toolkit configuration reloaded.\n",
        "",
    )


def test_reload_help_says_running_runtimes_reload(capsys: pytest.CaptureFixture[str]) -> None:
    """`pct reload` also reloads running runtimes; its help must not claim it only validates."""
    with pytest.raises(SystemExit):
        main(["reload", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "running pct runtime" in text
    assert "Nothing is written." in text
