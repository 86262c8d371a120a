"""`pct status`: exit codes, streams, model selection, session kinds, allowlist."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from pct_runtime import cli

GOLDEN = Path(__file__).parent.parent / "status" / "status_golden"
SECRET = "sk-do-not-print-0123456789"


@pytest.fixture
def agent(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    directory = tmp_path / "agent"
    directory.mkdir()
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(directory))
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("CODEX_HOME", raising=False)
    return directory


def write_json(path: Path, obj: object) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(obj), encoding="utf-8")


def write_config(agent: Path, obj: object) -> None:
    write_json(agent / "extensions" / "pi-codex-toolkit.json", obj)


def codex_login(agent: Path) -> None:
    write_json(
        agent / "auth.json",
        {"openai-codex": {"type": "oauth", "access": SECRET, "refresh": SECRET, "expires": 1}},
    )


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = cli.main(["status", *argv])
    out, err = capsys.readouterr()
    return code, out, err


def section(text: str, title: str) -> list[str]:
    lines = text.split("\n")
    start = lines.index(title)
    out = []
    for line in lines[start + 1 :]:
        if not line.startswith("  "):
            break
        out.append(line)
    return out


def test_new_install_prints_the_golden_text(
    agent: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run(capsys)
    expected = (GOLDEN / "new_install.txt").read_text(encoding="utf-8").split("\n")
    expected[1] = f"Config: {agent / 'extensions' / 'pi-codex-toolkit.json'}"
    assert (code, err) == (0, "")
    toolkit, sandbox = out.split("\nSandbox:\n")
    assert toolkit == "\n".join(expected).rstrip("\n")  # the toolkit's blocks stay byte for byte
    assert sandbox.startswith("  mode: danger-full-access\n")
    assert not (agent / "extensions").exists()  # status never writes


def test_sandbox_block_reads_the_config_key_and_flags_win(
    agent: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write_config(agent, {"pct": {"sandbox": {"mode": "read-only", "network": True}}})
    _, out, _ = run(capsys)
    block = section(out, "Sandbox:")
    assert block[:3] == [
        "  mode: read-only",
        "  writable roots: none (read-only)",
        "  network: on",
    ]
    _, out, _ = run(capsys, "--sandbox", "workspace-write")
    block = section(out, "Sandbox:")
    assert block[0] == "  mode: workspace-write"
    assert block[1].startswith(f"  writable roots: {os.path.realpath(os.getcwd())}, ")
    if sys.platform.startswith("linux"):
        # Names the namespaces' mechanism and where its binary comes from, then the layers.
        assert re.fullmatch(
            r"  enforced by: bubblewrap \S+ \((system /\S+/bwrap|bundled)\) \+ Landlock ABI "
            r"\d+ \+ seccomp",
            block[3],
        ), block[3]
    write_config(agent, {"pct": {"sandbox": {"mode": "everything"}}})
    _, out, _ = run(capsys)
    assert section(out, "Sandbox:")[0] == (
        "  config error: pct.sandbox.mode must be one of read-only, workspace-write, "
        "danger-full-access (pct serve refuses to start)"
    )


def test_broken_config_still_exits_zero(agent: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (agent / "extensions").mkdir()
    (agent / "extensions" / "pi-codex-toolkit.json").write_text("{nope", encoding="utf-8")
    code, out, _ = run(capsys)
    assert code == 0
    assert out.split("\n")[4] == "Config error: invalid-json (line 1 column 2)"
    write_config(agent, {"applyPatch": {"enabled": "yes"}})
    code, out, _ = run(capsys)
    assert code == 0
    assert (
        out.split("\n")[4]
        == "Config error: invalid-config (applyPatch.enabled must be true or false)"
    )


@pytest.mark.parametrize(
    "value", ["openai-codex/no-such-model", "nobody/gpt-5.4", "gpt-5.4", "/x", "p/"]
)
def test_bad_model_is_exit_2_on_stderr(
    agent: Path, capsys: pytest.CaptureFixture[str], value: str
) -> None:
    code, out, err = run(capsys, "--model", value)
    assert code == 2
    assert out == ""
    assert err.startswith("pct: ")
    assert value in err


def test_model_id_may_contain_slash(agent: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write_json(
        agent / "models.json",
        {
            "providers": {
                "router": {
                    "baseUrl": "https://router.example/v1",
                    "api": "openai-completions",
                    "models": [{"id": "vendor/model-x"}],
                }
            }
        },
    )
    code, out, _ = run(capsys, "--model", "router/vendor/model-x")
    assert code == 0
    assert out.split("\n")[2:4] == [
        "Current model: router/vendor/model-x",
        "Current API: openai-completions",
    ]


def test_default_model_from_settings(agent: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write_json(
        agent / "settings.json", {"defaultProvider": "openai-codex", "defaultModel": "gpt-5.4"}
    )
    _, out, _ = run(capsys)
    assert out.split("\n")[2] == "Current model: openai-codex/gpt-5.4"
    # An unknown settings default is no model, not an error.
    write_json(agent / "settings.json", {"defaultProvider": "openai-codex", "defaultModel": "gone"})
    code, out, _ = run(capsys)
    assert code == 0
    assert out.split("\n")[2] == "Current model: —"


def test_project_settings_in_the_working_directory_win(
    agent: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Like Pi, `<cwd>/.pi/settings.json` is merged over the global settings.json."""
    write_json(
        agent / "settings.json", {"defaultProvider": "openai-codex", "defaultModel": "gpt-5.4"}
    )
    project = tmp_path / "project"
    write_json(project / ".pi" / "settings.json", {"defaultModel": "gpt-5.1"})
    monkeypatch.chdir(project)
    code, out, err = run(capsys)
    assert (code, err) == (0, "")
    assert out.split("\n")[2] == "Current model: openai-codex/gpt-5.1"


def test_unusable_settings_default_is_a_warning(
    agent: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`Current model: —` alone does not say why; stderr names the settings.json problem."""
    write_json(agent / "settings.json", {"defaultProvider": "openai-codex", "defaultModel": "gone"})
    code, out, err = run(capsys)
    assert code == 0
    assert out.split("\n")[2] == "Current model: —"
    assert err == (
        "pct: warning: settings.json default model openai-codex/gone is not in Pi's model "
        "registry; no current model\n"
    )
    (agent / "settings.json").write_text("{", encoding="utf-8")
    code, out, err = run(capsys)
    assert code == 0
    assert out.split("\n")[2] == "Current model: —"
    assert err == "pct: warning: settings.json unreadable or not valid JSON\n"
    # --model does not read settings.json, so its problems are not reported
    code, out, err = run(capsys, "--model", "openai-codex/gpt-5.4")
    assert (code, err) == (0, "")


@pytest.mark.parametrize(
    "extra",
    [["--model", "openai/gpt-5.4"], ["--tools", "read"], ["--headless"], ["--session", "embedded"]],
)
def test_live_refuses_fresh_session_options(
    agent: Path, capsys: pytest.CaptureFixture[str], extra: list[str]
) -> None:
    """`--live` reports running runtimes; silently ignoring `--model` etc. would mislead."""
    code, out, err = run(capsys, "--live", *extra)
    assert (code, out) == (2, "")
    assert err == (
        "pct: --live shows the running runtimes as they are; "
        "--model, --tools, --headless and --session apply only without it\n"
    )


def test_tools_names_nothing_known_is_a_warning(
    agent: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A typo in --tools silently removes a tool; say which names match nothing."""
    code, out, err = run(capsys, "--tools", "read,apply-patch,exec_command,bogus")
    assert code == 0
    assert out.startswith("Pi Codex Toolkit\n")
    assert err == (
        "pct: warning: --tools names no pct or Pi native tool: apply-patch, bogus "
        "(known: read, bash, edit, write, openai_web_search, openai_generate_image, "
        "apply_patch, exec_command, write_stdin, exec, wait, computer_use_list_apps, "
        "computer_use_get_app_state, computer_use_click, computer_use_type_text, "
        "computer_use_press_key, computer_use_scroll, find_tools)\n"
    )


def test_session_kinds(agent: Path, capsys: pytest.CaptureFixture[str]) -> None:
    codex_login(agent)
    write_config(
        agent,
        {
            "remoteCompaction": {"enabled": True},
            "webSearch": {"enabled": True, "backend": "native"},
        },
    )
    _, out, err = run(capsys, "--model", "openai-codex/gpt-5.4")
    assert section(out, "Remote Compaction:")[1:3] == [
        "  effective: unavailable",
        "  reason: no-payload-hook",
    ]
    assert section(out, "Web Search:")[6] == "  reason: no-payload-hook"
    _, out, err = run(capsys, "--model", "openai-codex/gpt-5.4", "--session", "embedded")
    assert section(out, "Remote Compaction:")[1:3] == ["  effective: active", "  reason: "]
    assert section(out, "Web Search:")[3] == "  effective backend: native"
    assert SECRET not in out + err


def test_headless_and_ui_on_macos(
    agent: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from pct_runtime.capabilities.computer_use import eligibility
    from pct_runtime.host.system import platform

    probes: list[str] = []

    class FakeProbe:
        """Stands in for the ChatGPT.app chain, which needs macOS."""

        async def probe(self) -> str | None:
            probes.append("probe")
            return None if len(probes) == 1 else "incompatible-sky-target"

    monkeypatch.setattr(platform, "current_platform", lambda: "darwin")
    monkeypatch.setattr(eligibility, "ComputerUseProbe", FakeProbe)
    write_config(agent, {"computerUse": {"enabled": True}})
    _, out, _ = run(capsys, "--model", "openai-codex/gpt-5.4", "--headless")
    assert section(out, "Computer Use:")[1:4] == [
        "  effective: unavailable",
        "  transport: —",
        "  reason: no-interactive-ui",
    ]
    _, out, _ = run(capsys, "--model", "openai-codex/gpt-5.4")
    assert section(out, "Computer Use:")[1:4] == [
        "  effective: active",
        "  transport: node-repl",
        "  reason: ",
    ]
    assert probes == ["probe"]  # headless stopped before the probe
    _, out, _ = run(capsys, "--model", "openai-codex/gpt-5.3-codex-spark")
    assert section(out, "Computer Use:")[3] == "  reason: model-has-no-image-input"
    assert probes == ["probe"]
    _, out, _ = run(capsys, "--model", "openai-codex/gpt-5.4")
    assert section(out, "Computer Use:")[3] == "  reason: incompatible-sky-target"


def test_tools_allowlist_is_absence(agent: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write_config(agent, {"applyPatch": {"enabled": True}})
    _, out, _ = run(capsys, "--tools", "read,bash,edit,write")
    assert section(out, "Apply Patch:")[2] == "  reason: conflicting-tool-name"  # legacy row
    write_config(
        agent,
        {
            "execution": {
                "version": 1,
                "rules": [{"id": "r", "match": "*", "patch": True, "shell": False, "code": False}],
            }
        },
    )
    _, out, _ = run(capsys, "--model", "openai/gpt-5.4", "--tools", " read , bash,edit,write,")
    assert section(out, "Apply Patch:")[2] == "  reason: patch-unavailable"  # rules row: absence
    assert "  notes: patch-unavailable" in out.split("\n")
    _, out, _ = run(capsys, "--model", "openai/gpt-5.4")
    assert "  hide edit/write: yes" in out.split("\n")


def test_models_json_problem_is_a_warning(agent: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (agent / "models.json").write_text("[", encoding="utf-8")
    code, out, err = run(capsys, "--model", "openai-codex/gpt-5.4")
    assert code == 0
    assert err == "pct: warning: models.json is not valid JSON\n"
    assert out.startswith("Pi Codex Toolkit\n")
    # the warning comes before the error it explains (the custom model is gone with the file)
    code, out, err = run(capsys, "--model", "my-proxy/gpt-5.4")
    assert (code, out) == (2, "")
    assert err == (
        "pct: warning: models.json is not valid JSON\n"
        "pct: unknown model 'my-proxy/gpt-5.4': not in Pi's model registry "
        "(models.json or the built-in catalog); did you mean openai/gpt-5.4? "
        "Run `pct models` to list the valid PROVIDER/ID values.\n"
    )


def test_real_process(agent: Path) -> None:
    codex_login(agent)
    write_config(agent, {"imageGeneration": {"enabled": True}})
    env = {**os.environ, "PI_CODING_AGENT_DIR": str(agent)}
    done = subprocess.run(
        [sys.executable, "-m", "pct_runtime.cli", "status", "--model", "anthropic/claude"],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
        check=False,
    )
    assert done.returncode == 2
    assert done.stdout == ""
    assert "anthropic/claude" in done.stderr
    done = subprocess.run(
        [sys.executable, "-m", "pct_runtime.cli", "status", "--model", "openai-codex/gpt-5.4"],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0
    assert section(done.stdout, "Image Generation:")[1:3] == [
        "  effective: active",
        "  backend: codex-oauth",
    ]
    assert SECRET not in done.stdout + done.stderr


def test_status_shows_the_command_policy(agent: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write_config(
        agent,
        {
            "pct": {
                "commands": {
                    "default": "ask",
                    "rules": [
                        {"prefix": "git push", "decision": "deny"},
                        {"prefix": "npm test", "decision": "allow"},
                    ],
                }
            }
        },
    )
    code, out, _ = run(capsys)
    assert code == 0
    assert section(out, "Commands:")[:4] == [
        "  default: ask",
        "  rules: 2",
        "    deny: git push",
        "    allow: npm test",
    ]


def test_status_names_a_bad_command_rule(agent: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write_config(agent, {"pct": {"commands": {"rules": [{"prefix": "", "decision": "deny"}]}}})
    _, out, _ = run(capsys)
    assert "pct.commands.rules[0].prefix must be a non-empty command prefix" in out
    assert "  default: allow" in section(out, "Commands:")
