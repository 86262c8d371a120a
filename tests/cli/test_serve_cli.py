"""`pct serve` argument errors are reported before anything starts."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from pct_runtime.cli import main


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["serve", "--model", "gpt-5"], "--model must be PROVIDER/ID, got 'gpt-5'"),
        (["serve", "--model", "openai/no-such-model"], "unknown model 'openai/no-such-model'"),
        (["serve", "--http", "localhost:http"], "--http: port must be a number, got 'http'"),
    ],
)
def test_bad_arguments_exit_2(
    argv: list[str],
    message: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(tmp_path))
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("pct: ")
    assert message in err
    assert not (tmp_path / "pct").exists()  # nothing was started or registered


def test_broken_pi_files_and_unknown_tools_are_warned_before_serving(tmp_path: Path) -> None:
    """A served session has nowhere else to say that custom providers or the default
    model are gone, or that a --tools typo removed a tool: the same warnings as status."""
    agent = tmp_path / "agent"
    agent.mkdir()
    (agent / "models.json").write_text("{bad", encoding="utf-8")
    (agent / "auth.json").write_text("[1]", encoding="utf-8")
    (agent / "settings.json").write_text(
        '{"defaultProvider": "openai-codex", "defaultModel": "gone"}', encoding="utf-8"
    )
    env = {**os.environ, "PI_CODING_AGENT_DIR": str(agent)}
    env.pop("OPENAI_API_KEY", None)
    done = subprocess.run(
        [sys.executable, "-m", "pct_runtime.cli", "serve", "--tools", "apply-patch,exec_command"],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0
    assert done.stdout == ""
    assert done.stderr.splitlines() == [
        "pct: warning: models.json is not valid JSON",
        "pct: warning: auth.json must be a JSON object",
        "pct: warning: settings.json default model openai-codex/gone is not in Pi's model "
        "registry; no current model",
        "pct: warning: --tools names no pct or Pi native tool: apply-patch (known: read, bash, "
        "edit, write, openai_web_search, openai_generate_image, apply_patch, exec_command, "
        "write_stdin, exec, wait, computer_use_list_apps, computer_use_get_app_state, "
        "computer_use_click, computer_use_type_text, computer_use_press_key, "
        "computer_use_scroll, find_tools)",
    ]


def test_a_broken_models_json_is_warned_before_the_unknown_model_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(tmp_path))
    (tmp_path / "models.json").write_text("[", encoding="utf-8")
    assert main(["serve", "--model", "my-proxy/gpt-5.4"]) == 2
    assert capsys.readouterr().err == (
        "pct: warning: models.json is not valid JSON\n"
        "pct: unknown model 'my-proxy/gpt-5.4': not in Pi's model registry "
        "(models.json or the built-in catalog); did you mean openai/gpt-5.4? "
        "Run `pct models` to list the valid PROVIDER/ID values.\n"
    )
