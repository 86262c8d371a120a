"""Golden `/pct status` texts, byte for byte, as the toolkit prints them."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent.parent / "decide"))

import pytest
from decide_fixtures import CODEX, THIRD_PARTY, plan, rules, tools

from pct_runtime.decide.sync import APPLY_ERROR_TEXT
from pct_runtime.status import format_status

PATH = "~/.pi/agent/extensions/pi-codex-toolkit.json"

#: Golden files hold the exact bytes (trailing spaces after `reason:` included).
GOLDEN = Path(__file__).parent / "status_golden"

NEW_INSTALL = (GOLDEN / "new_install.txt").read_text(encoding="utf-8")

EVERYTHING_ON = {
    "webSearch": {
        "enabled": True,
        "backend": "auto",
        "sidecarModel": {"provider": "openai-codex", "model": "gpt-5.4", "thinkingLevel": "auto"},
    },
    "remoteCompaction": {"enabled": True},
    "imageGeneration": {"enabled": True},
    "applyPatch": {"enabled": True},
    "computerUse": {"enabled": True},
    "shellSessions": {"enabled": True},
    "codeMode": {"enabled": True},
    "toolDiscovery": {"enabled": True},
}

EVERYTHING_ON_CODEX = (GOLDEN / "everything_on_codex.txt").read_text(encoding="utf-8")


def text(p: object, **kw: object) -> str:
    return format_status(p, config_path=PATH, **kw)  # type: ignore[arg-type]


def section(full: str, title: str) -> list[str]:
    lines = full.split("\n")
    start = lines.index(title)
    out = []
    for line in lines[start + 1 :]:
        if not line.startswith("  "):
            break
        out.append(line)
    return out


def test_new_install() -> None:
    assert text(plan({}, model=None, kind="mcp", ui=True, platform="linux")) == NEW_INSTALL


def test_everything_on_with_official_codex_model() -> None:
    p = plan(EVERYTHING_ON, model=CODEX, kind="embedded", ui=True, platform="darwin")
    assert text(p) == EVERYTHING_ON_CODEX


def test_everything_on_in_an_mcp_session() -> None:
    p = plan(EVERYTHING_ON, model=CODEX, kind="mcp", ui=True, platform="darwin")
    out = text(p)
    assert section(out, "Web Search:")[:4] == [
        "  configured: on",
        "  effective: active",
        "  requested backend: auto",
        "  effective backend: sidecar",
    ]
    assert section(out, "Remote Compaction:")[1:3] == [
        "  effective: unavailable",
        "  reason: no-payload-hook",
    ]


def test_third_party_model() -> None:
    p = plan(EVERYTHING_ON, model=THIRD_PARTY, kind="mcp", ui=False, platform="linux")
    out = text(p)
    assert out.split("\n")[2:4] == [
        "Current model: anthropic/claude-sonnet-4-5",
        "Current API: anthropic-messages",
    ]
    assert section(out, "Web Search:") == [
        "  configured: on",
        "  effective: active",
        "  requested backend: auto",
        "  effective backend: sidecar",
        "  web search executor: openai-codex/gpt-5.4",
        "  web search executor effort: auto",
        "  reason: ",
        "  Sidecar uses a separate OpenAI request with additional latency and cost.",
    ]
    assert section(out, "Remote Compaction:")[1:3] == [
        "  effective: unavailable",
        "  reason: no-payload-hook",
    ]
    assert section(out, "Image Generation:")[1:4] == [
        "  effective: deferred",
        "  backend: codex-oauth",
        "  reason: ",
    ]
    assert section(out, "Computer Use:")[1:4] == [
        "  effective: unavailable",
        "  transport: —",
        "  reason: unsupported-platform",
    ]
    embedded = text(plan(EVERYTHING_ON, model=THIRD_PARTY, kind="embedded", platform="linux"))
    assert section(embedded, "Remote Compaction:")[2] == "  reason: unsupported-provider"


def test_broken_config_file() -> None:
    out = text(
        plan({}, model=None),
        config_error="invalid-config",
        config_error_detail="applyPatch.enabled must be true or false",
    )
    lines = out.split("\n")
    assert lines[4] == "Config error: invalid-config (applyPatch.enabled must be true or false)"
    assert "\n".join(lines[:4] + lines[5:]) == NEW_INSTALL
    assert (
        text(plan({}, model=None), config_error="invalid-json").split("\n")[4]
        == "Config error: invalid-json"
    )


def test_apply_error_follows_config_error() -> None:
    out = text(plan({}, model=None), config_error="invalid-json", apply_error=APPLY_ERROR_TEXT)
    assert out.split("\n")[4:6] == [
        "Config error: invalid-json",
        f"Apply error: {APPLY_ERROR_TEXT}",
    ]


RULE_NOTE_CASES = [
    # (note, rule flags, filtered names, row, expected row lines)
    (
        "patch-unavailable",
        (True, False, False),
        ["apply_patch"],
        "Apply Patch:",
        ["  configured: on", "  effective: unavailable", "  reason: patch-unavailable"],
    ),
    (
        "shell-pair-unavailable",
        (False, True, False),
        ["write_stdin"],
        "Shell Sessions:",
        ["  configured: on", "  effective: unavailable", "  reason: shell-pair-unavailable"],
    ),
    (
        "code-pair-unavailable",
        (False, False, True),
        ["wait"],
        "Code Mode:",
        ["  configured: on", "  effective: unavailable", "  reason: code-pair-unavailable"],
    ),
    (
        "code-shell-pair-unavailable",
        (False, False, True),
        ["exec_command"],
        "Code Mode:",
        ["  configured: on", "  effective: unavailable", "  reason: code-shell-pair-unavailable"],
    ),
    (
        "code-unavailable-did-not-promote-patch",
        (True, False, True),
        ["exec"],
        "Apply Patch:",
        [
            "  configured: on",
            "  effective: unavailable",
            "  reason: code-unavailable-did-not-promote-patch",
        ],
    ),
    (
        "patch-unavailable-kept-native-editing",
        (True, False, True),
        ["apply_patch"],
        "Apply Patch:",
        [
            "  configured: on",
            "  effective: unavailable",
            "  reason: patch-unavailable-kept-native-editing",
        ],
    ),
]


@pytest.mark.parametrize(
    ("note", "flags", "filtered", "row", "expected"),
    RULE_NOTE_CASES,
    ids=[c[0] for c in RULE_NOTE_CASES],
)
def test_rules_with_each_note(
    note: str, flags: tuple[bool, bool, bool], filtered: list[str], row: str, expected: list[str]
) -> None:
    snap = tools()
    allowed = [n for n in snap.names if n not in filtered]
    p = plan(rules(("astra", "gpt-5.4", *flags)), snapshot=tools(allow=allowed))
    out = text(p)
    lines = out.split("\n")
    assert lines[3] == "Current API: openai-codex-responses"
    assert lines[4] == "Execution rules:"
    assert lines[5:8] == [
        "  schema: rules",
        "  rule: astra",
        f"  requested: {'+'.join(f for f, on in zip('PSC', flags, strict=True) if on)}",
    ]
    assert note in lines[11].removeprefix("  notes: ").split(",")
    assert lines[12] == "Web Search:"
    assert section(out, row) == expected + (
        [section(out, row)[-1]] if len(section(out, row)) > 3 else []
    )


def test_rules_block_with_everything_admitted() -> None:
    out = text(plan(rules(("astra", "gpt-5.4", True, True, True))))
    assert out.split("\n")[4:12] == [
        "Execution rules:",
        "  schema: rules",
        "  rule: astra",
        "  requested: P+S+C",
        "  effective: nestedPatch+directShell+code",
        "  hide bash: yes",
        "  hide edit/write: yes",
        "  notes: ",
    ]


def test_rules_unmatched_model_rows_are_off() -> None:
    out = text(plan(rules(("astra", "gpt-6-astra", True, True, True))))
    assert out.split("\n")[4:12] == [
        "Execution rules:",
        "  schema: unmatched",
        "  rule: —",
        "  requested: none",
        "  effective: native",
        "  hide bash: no",
        "  hide edit/write: no",
        "  notes: ",
    ]
    assert section(out, "Apply Patch:") == ["  configured: off", "  effective: off", "  reason: "]


def test_foreign_apply_patch_winner() -> None:
    snap = tools(foreign=["apply_patch"])
    legacy = text(plan({"applyPatch": {"enabled": True}}, snapshot=snap))
    assert section(legacy, "Apply Patch:") == [
        "  configured: on",
        "  effective: unavailable",
        "  reason: conflicting-tool-name",
    ]
    ruled = text(plan(rules(("r", "*", True, False, False)), snapshot=snap))
    assert section(ruled, "Apply Patch:")[2] == "  reason: conflicting-tool-name"
    assert "  notes: patch-unavailable" in ruled.split("\n")
    # A filtered (absent) name under rules is the route note, not a conflict.
    absent = text(
        plan(rules(("r", "*", True, False, False)), snapshot=tools(allow=["read", "bash"]))
    )
    assert section(absent, "Apply Patch:")[2] == "  reason: patch-unavailable"


def test_rules_without_a_current_model_say_so_in_plain_words() -> None:
    out = text(plan(rules(("everything", "*", True, True, True)), model=None))
    lines = out.split("\n")
    assert lines[5] == "  schema: unmatched"
    assert lines[12] == (
        "No current model, so no execution rule can match. Set one: `pct-tui --model "
        "PROVIDER/ID`, `pct serve --model PROVIDER/ID`, or defaultProvider and defaultModel "
        "in Pi's settings.json."
    )
    for name in ("Apply Patch:", "Shell Sessions:", "Code Mode:"):
        assert section(out, name)[:3] == [
            "  configured: off",
            "  effective: off",
            "  reason: current-model-missing",
        ]
    # a model that matches no rule is a different story: no model line, no reason invented
    known = text(plan(rules(("astra", "gpt-6-astra", True, True, True))))
    assert "No current model" not in known
