"""pct's own settings (`pct.sandbox`, `pct.journal`, `pct.commands`) are checked wherever a
user looks: `pct reload`, `pct status`, `pct serve`, `pct log` and `pct undo`, through the real
process."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.cli.pct_proc import run_pct, write_config

BAD_MODE = '{"pct": {"sandbox": {"mode": "strict"}}}'
BAD_JOURNAL = '{"applyPatch": {"enabled": true}, "pct": {"journal": {"maxBytes": 5}}}'
MODE_DETAIL = "pct.sandbox.mode must be one of read-only, workspace-write, danger-full-access"
JOURNAL_DETAIL = "pct.journal.maxBytes must be an integer of at least 1048576"
BAD_RULE = '{"pct": {"commands": {"rules": [{"prefix": "rm", "decision": "strict"}]}}}'
RULE_DETAIL = "pct.commands.rules[0].decision must be one of allow, ask, deny"


@pytest.fixture
def agent(tmp_path: Path) -> Path:
    return tmp_path / "agent"


@pytest.mark.parametrize(
    ("text", "detail"),
    [(BAD_MODE, MODE_DETAIL), (BAD_JOURNAL, JOURNAL_DETAIL), (BAD_RULE, RULE_DETAIL)],
)
def test_reload_rejects_an_invalid_pct_field(agent: Path, text: str, detail: str) -> None:
    write_config(agent, text)
    done = run_pct(agent, "reload")
    assert done.returncode == 1
    assert done.stdout == ""
    assert f"Pi Codex Toolkit config error: invalid-config ({detail})" in done.stderr
    assert "strict" not in done.stderr  # the value is never repeated


def test_status_names_the_invalid_pct_field(agent: Path) -> None:
    write_config(agent, BAD_JOURNAL)
    done = run_pct(agent, "status")
    assert done.returncode == 0
    assert f"Config error: invalid-config ({JOURNAL_DETAIL})" in done.stdout


def test_serve_refuses_an_invalid_journal_setting(agent: Path) -> None:
    path = write_config(agent, BAD_JOURNAL)
    done = run_pct(agent, "serve")
    assert done.returncode == 1
    assert f"invalid-config ({JOURNAL_DETAIL}) in {path}" in done.stderr


def test_serve_refuses_an_invalid_command_rule(agent: Path) -> None:
    path = write_config(agent, BAD_RULE)
    done = run_pct(agent, "serve")
    assert done.returncode == 1
    assert f"invalid-config ({RULE_DETAIL}) in {path}" in done.stderr


def test_serve_refuses_an_invalid_sandbox_mode(agent: Path) -> None:
    write_config(agent, BAD_MODE)
    done = run_pct(agent, "serve")
    assert done.returncode == 1
    assert MODE_DETAIL in done.stderr


def test_log_and_undo_say_why_the_journal_is_off(agent: Path, tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    patch = "*** Begin Patch\n*** Add File: a.txt\n+x\n*** End Patch\n"
    assert run_pct(agent, "apply-patch", "--cwd", str(work), stdin=patch).returncode == 0
    write_config(agent, BAD_JOURNAL)
    log = run_pct(agent, "log")
    assert log.returncode == 0
    assert f"pct: the journal is off: {JOURNAL_DETAIL} in " in log.stderr
    assert "; new calls are not recorded" in log.stderr
    assert "apply_patch" in log.stdout  # what was recorded before is still shown
    assert run_pct(agent, "undo").returncode == 0  # the recorded patch can still be undone
    refused = run_pct(agent, "undo")
    assert refused.returncode == 1
    assert f"the journal is off: {JOURNAL_DETAIL} in " in refused.stderr
    assert "undo still uses the calls recorded before" in refused.stderr


def test_undo_without_a_journal_says_it_is_switched_off(agent: Path) -> None:
    write_config(agent, '{"pct": {"journal": {"enabled": false}}}')
    done = run_pct(agent, "undo")
    assert done.returncode == 1
    assert "pct: the journal is off: pct.journal.enabled is false in " in done.stderr
    assert done.stderr.endswith("pct: nothing to undo: no journal yet (no call was recorded).\n")
    log = run_pct(agent, "log")
    assert log.returncode == 0
    assert "pct.journal.enabled is false" in log.stderr


def test_log_says_when_nothing_matches(agent: Path, tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    patch = "*** Begin Patch\n*** Add File: a.txt\n+x\n*** End Patch\n"
    assert run_pct(agent, "apply-patch", "--cwd", str(work), stdin=patch).returncode == 0
    done = run_pct(agent, "log", "--tool", "exec_command")
    assert done.returncode == 0
    assert done.stdout == ""
    assert done.stderr == "pct: no calls match these filters.\n"
    empty = run_pct(tmp_path / "fresh", "log")
    assert (empty.returncode, empty.stdout, empty.stderr) == (
        0,
        "",
        "pct: no calls recorded yet.\n",
    )


NESTED_TYPOS = (
    '{"applyPatch": {"enable": true}, "pct": {"sandox": {"mode": "read-only"}}, '
    '"webSearch": {"sidecarModel": {"provider": "openai", "model": "m", "thinking": "low"}}}'
)


def test_nested_typos_are_warned_with_their_dotted_path(agent: Path) -> None:
    path = write_config(agent, NESTED_TYPOS)
    done = run_pct(agent, "reload")
    assert done.returncode == 0
    assert done.stderr == (
        'pct: warning: unknown key "applyPatch.enable" is ignored; '
        "did you mean applyPatch.enabled?\n"
        'pct: warning: unknown key "pct.sandox" is ignored; did you mean pct.sandbox?\n'
        'pct: warning: unknown key "webSearch.sidecarModel.thinking" is ignored; '
        "did you mean webSearch.sidecarModel.thinkingLevel?\n"
    )
    status = run_pct(agent, "status")
    assert 'unknown key "pct.sandox" is ignored' in status.stderr
    assert path.read_text() == NESTED_TYPOS  # nothing written


def test_a_save_keeps_the_unknown_nested_field(agent: Path) -> None:
    from pct_runtime.config import ConfigStore

    path = write_config(agent, NESTED_TYPOS)
    store = ConfigStore(path)
    read = store.read()
    assert read.error is None
    store.save(read.config.model_copy(update={"debug": True}), read.revision)
    import json

    saved = json.loads(path.read_text())
    assert saved["applyPatch"]["enable"] is True
    assert saved["pct"] == {"sandox": {"mode": "read-only"}}
    assert saved["webSearch"]["sidecarModel"]["thinking"] == "low"


def test_config_show_lists_the_pct_section_with_its_defaults(agent: Path) -> None:
    import json

    write_config(agent, '{"pct": {"sandbox": {"mode": "read-only", "later": 1}}}')
    done = run_pct(agent, "config", "show")
    assert done.returncode == 0
    assert json.loads(done.stdout)["pct"] == {
        "sandbox": {"mode": "read-only", "later": 1, "network": False},
        "journal": {"enabled": True, "maxBytes": 104857600, "maxAgeDays": 30.0},
        "commands": {"default": "allow", "rules": []},
    }
    defaults = json.loads(run_pct(agent, "config", "show", "--defaults").stdout)
    assert defaults["pct"]["sandbox"] == {"mode": "danger-full-access", "network": False}
    assert defaults["applyPatch"] == {"enabled": False}
    assert defaults["webSearch"]["sidecarModel"] is None
