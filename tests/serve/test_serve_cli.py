"""`pct serve` argument errors are reported before anything starts."""

from __future__ import annotations

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
