"""Execution-rule globs, first match, and the legacy migration preview."""

from __future__ import annotations

import pytest

from pct_runtime.config import (
    ApplyPatchConfig,
    CodeModeConfig,
    ShellSessionsConfig,
    ToolkitConfig,
    default_config,
)
from pct_runtime.config.rules import (
    first_matching_rule,
    match_execution_pattern,
    preview_legacy_migration,
)
from pct_runtime.config.schema import ExecutionRule


@pytest.mark.parametrize(
    ("pattern", "model_id", "provider", "expected"),
    [
        ("gpt-6-astra", "gpt-6-astra", "openai", True),
        ("gpt-6-astra", "gpt-6-astra-mini", "openai", False),  # whole string
        ("gpt-6", "gpt-6-astra", "openai", False),
        ("GPT-*", "gpt-5", "openai", False),  # case sensitive
        ("gpt-*", "gpt-5", "openai", True),
        ("*", "anything at all", None, True),
        ("*", "", None, True),
        ("gpt-?", "gpt-5", None, True),
        ("gpt-?", "gpt-55", None, False),
        ("gpt-?", "gpt-", None, False),
        ("m?del", "mödel", None, True),  # ? is one code point
        ("m?del", "m😀del", None, True),
        ("a.b", "axb", None, False),  # everything else is literal
        ("a[bc]", "ab", None, False),
        ("a[bc]", "a[bc]", None, True),
        ("a+", "aa", None, False),
        ("^x$", "^x$", None, True),
        ("a\\*", "a\\xyz", None, True),
        ("grok*", "grok-4", "xai", True),
        ("openai/gpt-*", "gpt-5", "openai", True),  # with / : provider/modelId
        ("openai/gpt-*", "gpt-5", "openai-codex", False),
        ("openai*/gpt-5", "gpt-5", "openai-codex", True),
        ("*/gpt-5", "gpt-5", None, False),  # provider unknown
        ("gpt-5", "gpt-5", None, True),
        ("*", None, "openai", False),  # no model
        ("openrouter/openai/*", "openai/gpt-5", "openrouter", True),
        ("openai/*", "openai/gpt-5", "openrouter", False),
    ],
)
def test_glob(pattern: str, model_id: str | None, provider: str | None, expected: bool) -> None:
    assert match_execution_pattern(pattern, model_id, provider) is expected


def test_first_match_wins() -> None:
    rules = [
        ExecutionRule(id="astra", match="gpt-6-astra", patch=True, shell=False, code=True),
        ExecutionRule(id="gpt", match="gpt-*", patch=True, shell=True, code=False),
        ExecutionRule(id="all", match="*", patch=False, shell=False, code=False),
    ]
    first = first_matching_rule(rules, "gpt-6-astra", "openai")
    assert first is not None
    assert first.id == "astra"
    second = first_matching_rule(rules, "gpt-5", "openai")
    assert second is not None
    assert second.id == "gpt"
    third = first_matching_rule(rules, "claude", "anthropic")
    assert third is not None
    assert third.id == "all"
    assert first_matching_rule(rules[:2], "claude", "anthropic") is None
    assert first_matching_rule(rules, None, None) is None
    assert first_matching_rule([], "gpt-5", "openai") is None


def legacy(patch: bool, shell: bool, code: bool) -> ToolkitConfig:
    return default_config().model_copy(
        update={
            "apply_patch": ApplyPatchConfig(enabled=patch),
            "shell_sessions": ShellSessionsConfig(enabled=shell),
            "code_mode": CodeModeConfig(enabled=code),
        }
    )


def test_migration_preview_all_off_is_empty() -> None:
    assert preview_legacy_migration(default_config()) == []


@pytest.mark.parametrize(
    ("patch", "shell", "code"),
    [
        (True, False, False),
        (False, True, False),
        (False, False, True),
        (True, True, True),
        (True, False, True),
    ],
)
def test_migration_preview_is_one_catch_all_rule(patch: bool, shell: bool, code: bool) -> None:
    config = legacy(patch, shell, code)
    assert preview_legacy_migration(config) == [
        ExecutionRule(id="migrated", match="*", patch=patch, shell=shell, code=code)
    ]
