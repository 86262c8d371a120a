"""The config draft: the `/pct config` menu labels and semantics, as plain functions."""

from __future__ import annotations

from pct_runtime.config import COMPUTER_USE_TOOL_NAMES, default_config, parse_config
from pct_tui.state.drafts import (
    MIGRATE_EMPTY_NOTICE,
    ConfigDraft,
    duplicate_id_message,
    rule_label,
)


def draft_of(document: dict[str, object]) -> ConfigDraft:
    return ConfigDraft.start(parse_config(document), "rev-1", dict(document))


def labels(draft: ConfigDraft) -> list[str]:
    return [item.label for item in draft.menu()]


def test_menu_labels_of_a_new_install() -> None:
    assert labels(ConfigDraft.start(default_config(), "missing", {})) == [
        "Web Search: off",
        "Backend: auto",
        "Mode: live",
        "Context size: medium",
        "Web Search executor: none",
        "Web Search executor effort: -",
        "Remote Compaction: off",
        "Image Generation: off",
        "Computer Use: off",
        "Computer Use approval: Confirm",
        "Apply Patch: off",
        "Shell Sessions: off",
        "Code Mode: off",
        "Execution rules: none (native baseline)",
        "Code Mode nested Apply Patch confirmation: Confirm",
        "Tool Discovery: off",
        "Deferred tools: 7 of 13",
        "Command policy: no rules, default allow",
        "Debug metadata: off",
        "Save",
        "Cancel",
    ]


def test_toggles_and_cycles() -> None:
    draft = ConfigDraft.start(default_config(), "missing", {})
    for key in ("web_search", "backend", "mode", "context_size", "computer_use_approval"):
        assert draft.toggle(key)
    draft.toggle("code_approval")
    draft.toggle("debug")
    menu = labels(draft)
    assert menu[:4] == ["Web Search: on", "Backend: native", "Mode: cached", "Context size: high"]
    assert "Computer Use approval: Always" in menu
    assert "Code Mode nested Apply Patch confirmation: Always" in menu
    assert "Debug metadata: on" in menu
    assert draft.dirty
    draft.toggle("backend")
    draft.toggle("backend")
    assert draft.config.web_search.backend == "auto"  # auto → native → sidecar → auto
    assert not draft.toggle("save")  # not a switch


def test_executor_and_effort() -> None:
    draft = ConfigDraft.start(default_config(), "missing", {})
    draft.set_effort("high")  # no executor yet: nothing to set
    assert draft.config.web_search.sidecar_model is None
    draft.set_executor("openai-codex", "gpt-5.4")
    draft.set_effort("high")
    assert labels(draft)[4:6] == [
        "Web Search executor: openai-codex/gpt-5.4",
        "Web Search executor effort: high",
    ]
    draft.set_executor("openai-codex", "gpt-5.4")  # same model keeps its effort
    assert draft.config.web_search.sidecar_model.thinking_level == "high"  # type: ignore[union-attr]
    draft.set_executor("openai", "gpt-5.1")  # another model starts at auto
    assert draft.config.web_search.sidecar_model.thinking_level == "auto"  # type: ignore[union-attr]
    draft.set_executor(None, None)
    assert labels(draft)[4] == "Web Search executor: none"


def test_deferred_list_is_validated() -> None:
    draft = ConfigDraft.start(default_config(), "missing", {})
    before = draft.config
    error = draft.set_deferred(["apply_patch", *COMPUTER_USE_TOOL_NAMES[:3]])
    assert error == "toolDiscovery.deferred must list all six Computer Use tools or none"
    assert draft.config is before  # nothing changed
    assert draft.set_deferred(["find_tools"]) == (
        "toolDiscovery.deferred must be an array of deferrable Toolkit tool names"
    )
    assert draft.set_deferred(["exec", "apply_patch"]) is None
    assert draft.config.tool_discovery.deferred == ("apply_patch", "exec")
    assert draft.set_deferred([]) is None


def test_rules_label_states() -> None:
    assert draft_of({"applyPatch": {"enabled": True}}).rules_label() == (
        "Execution rules: legacy flags (open to migrate)"
    )
    rules = [{"id": "a", "match": "*", "patch": True, "shell": False, "code": False}]
    assert draft_of({"execution": {"version": 1, "rules": rules}}).rules_label() == (
        "Execution rules: 1 rule(s)"
    )
    assert draft_of({"execution": {"version": 1, "rules": []}}).rules_label() == (
        "Execution rules: none (native baseline)"
    )


def test_migration_previews() -> None:
    legacy = draft_of({"shellSessions": {"enabled": True}, "codeMode": {"enabled": True}})
    assert legacy.open_rules() == (
        "Save will store one catch-all rule migrated (S+C) and remove the legacy enabled "
        "flags. Code-only also starts the nested Shell backend."
    )
    assert [rule_label(0, r) for r in legacy.rules] == ["1. migrated  *  S+C"]
    assert legacy.open_rules() is None  # already previewed
    empty = draft_of({})
    assert empty.open_rules() == MIGRATE_EMPTY_NOTICE
    assert empty.rules == []


def test_core_tools_are_legacy_switches_until_rules_exist() -> None:
    draft = draft_of({})
    for key in ("apply_patch", "shell_sessions", "code_mode"):
        assert draft.toggle(key)
    assert labels(draft)[10:14] == [
        "Apply Patch: on",
        "Shell Sessions: on",
        "Code Mode: on",
        "Execution rules: legacy flags (open to migrate)",
    ]
    assert draft.dirty
    ruled = draft_of({"execution": {"version": 1, "rules": []}})
    assert not ruled.toggle("apply_patch")  # the screen opens the rules page instead
    assert labels(ruled)[10] == "Apply Patch: by execution rules (opens Rules)"
    assert not ruled.dirty


def test_migration_preview_is_not_an_edit_and_the_notice_follows_the_draft() -> None:
    legacy = draft_of({"applyPatch": {"enabled": True}})
    assert legacy.open_rules() is not None
    assert not legacy.dirty  # only looking: nothing to lose on quit
    legacy.leave_rules()  # unedited preview undone: the legacy switches are back
    assert legacy.config.execution is None
    assert labels(legacy)[10] == "Apply Patch: on"
    empty = draft_of({})
    assert empty.open_rules() == MIGRATE_EMPTY_NOTICE
    empty.add_rule()
    assert empty.rules_notice() == (
        "Save will store these 1 rule(s) and remove the legacy Apply Patch / Shell / Code switches."
    )
    assert empty.dirty
    empty.leave_rules()  # edited: kept
    assert len(empty.rules) == 1
    empty.delete_rule(0)
    assert empty.rules_notice() == MIGRATE_EMPTY_NOTICE


def test_rule_editing() -> None:
    draft = draft_of({"execution": {"version": 1, "rules": []}})
    assert draft.add_rule() == 0
    assert draft.add_rule() == 1
    assert [r.id for r in draft.rules] == ["rule-1", "rule-2"]
    assert draft.update_rule(
        1, rule_id="rule-1", match="*", patch=True, shell=False, code=False
    ) == (duplicate_id_message("rule-1"))
    assert duplicate_id_message("rule-1") == 'Rule id "rule-1" is already used by another rule.'
    assert draft.update_rule(1, rule_id="x", match=" ", patch=False, shell=False, code=False) == (
        "match must be a nonempty glob."
    )
    assert (
        draft.update_rule(
            1, rule_id="codex", match="gpt-5*-codex", patch=True, shell=True, code=False
        )
        is None
    )
    assert rule_label(1, draft.rules[1]) == "2. codex  gpt-5*-codex  P+S"
    assert draft.move_rule(1, -1) == 0
    assert [r.id for r in draft.rules] == ["codex", "rule-1"]
    assert draft.move_rule(0, -1) == 0  # already first
    assert draft.add_rule() == 2
    assert draft.rules[2].id == "rule-2"  # first unused k
    assert draft.matching_rule("gpt-5.1-codex", "openai").id == "codex"  # type: ignore[union-attr]
    assert draft.matching_rule("o3", "openai").id == "rule-1"  # type: ignore[union-attr]
    draft.delete_rule(0)
    assert [r.id for r in draft.rules] == ["rule-1", "rule-2"]


def test_a_rule_after_a_catch_all_is_warned_about_as_unreachable() -> None:
    def rule(rule_id: str, match: str) -> dict[str, object]:
        return {"id": rule_id, "match": match, "patch": True, "shell": False, "code": False}

    draft = draft_of(
        {
            "execution": {
                "version": 1,
                "rules": [
                    rule("gpt", "gpt-*"),
                    rule("any-openai", "*/*"),
                    rule("claude", "anthropic/claude-*"),
                    rule("all", "*"),
                    rule("late", "o3"),
                ],
            }
        }
    )
    assert draft.unreachable_notes() == [
        "Rule 3 (claude) is never reached: rule 2 (any-openai, match */*) matches every "
        "model first.",
        "Rule 5 (late) is never reached: rule 4 (all, match *) matches every model first.",
    ]
    draft.delete_rule(3)
    assert draft.unreachable_notes() == [
        "Rule 3 (claude) is never reached: rule 2 (any-openai, match */*) matches every "
        "model first."
    ]


def test_command_policy_edits_stay_in_the_raw_document() -> None:
    from pct_runtime.config import default_config

    raw = {"pct": {"sandbox": {"mode": "read-only"}}}
    draft = ConfigDraft.start(default_config(), "missing", raw)
    index = draft.add_command_rule()
    assert draft.update_command_rule(index, " git push ", "deny") is None
    assert draft.update_command_rule(index, "git push", "block") == (
        "pct.commands.rules[0].decision must be one of allow, ask, deny"
    )
    draft.cycle_command_default()
    assert draft.raw["pct"] == {
        "sandbox": {"mode": "read-only"},
        "commands": {"default": "ask", "rules": [{"prefix": "git push", "decision": "deny"}]},
    }
    assert raw == {"pct": {"sandbox": {"mode": "read-only"}}}  # the store's copy is untouched
    assert draft.dirty
    assert draft.commands_dirty
    assert draft.commands_label() == "Command policy: 1 rule, default ask"
    assert draft.move_command_rule(0, 1) == 0
    draft.delete_command_rule(0)
    assert draft.commands.rules == ()
