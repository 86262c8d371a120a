"""Validation table, check order, null handling, golden document, unknown-field merging."""

from __future__ import annotations

import dataclasses
import json
import re
from typing import Any

import pytest

from pct_runtime.config import (
    COMPUTER_USE_TOOL_NAMES,
    ConfigValidationError,
    ExecutionConfig,
    ExecutionRule,
    SidecarModel,
    default_config,
    parse_config,
    to_json_obj,
)

RULE_OBJECT = (
    "be an object with unique nonempty id, nonempty match, and boolean patch, shell, and code"
)


def rule(**overrides: Any) -> dict[str, Any]:
    base: dict[str, Any] = {"id": "r", "match": "*", "patch": False, "shell": False, "code": False}
    base.update(overrides)
    return base


def echoes(detail: str, value: str) -> bool:
    """Whether `detail` contains `value` as a whole token (`x` inside `openai-codex` is not)."""
    return re.search(rf"(?<![\w-]){re.escape(value)}(?![\w-])", detail) is not None


# (detail, document, parts of the document the detail must not echo)
REJECTIONS: list[tuple[str, Any, list[str]]] = [
    ("configuration must be a JSON object", None, ["null"]),
    ("configuration must be a JSON object", [], ["[]"]),
    ("configuration must be a JSON object", "text", ["text"]),
    ("configuration must be a JSON object", 3, ["3"]),
    ("debug must be true or false", {"debug": "yes"}, ["yes"]),
    ("debug must be true or false", {"debug": 1}, ["1"]),
    ("webSearch must be an object", {"webSearch": False}, ["false"]),
    ("remoteCompaction must be an object", {"remoteCompaction": False}, ["false"]),
    (
        "remoteCompaction.enabled must be true or false",
        {"remoteCompaction": {"enabled": "yes"}},
        ["yes"],
    ),
    ("imageGeneration must be an object", {"imageGeneration": False}, ["false"]),
    (
        "imageGeneration.enabled must be true or false",
        {"imageGeneration": {"enabled": "yes"}},
        ["yes"],
    ),
    ("applyPatch must be an object", {"applyPatch": False}, ["false"]),
    ("applyPatch.enabled must be true or false", {"applyPatch": {"enabled": "yes"}}, ["yes"]),
    ("applyPatch.enabled must be true or false", {"applyPatch": {"enabled": 0}}, ["0"]),
    ("computerUse must be an object", {"computerUse": False}, ["false"]),
    ("computerUse.enabled must be true or false", {"computerUse": {"enabled": "yes"}}, ["yes"]),
    (
        "computerUse.approvalMode must be one of confirm, always",
        {"computerUse": {"approvalMode": "sometimes"}},
        ["sometimes"],
    ),
    ("shellSessions must be an object", {"shellSessions": False}, ["false"]),
    ("shellSessions.enabled must be true or false", {"shellSessions": {"enabled": "yes"}}, ["yes"]),
    ("codeMode must be an object", {"codeMode": False}, ["false"]),
    ("codeMode.enabled must be true or false", {"codeMode": {"enabled": "yes"}}, ["yes"]),
    (
        "codeMode.approvalMode must be one of confirm, always",
        {"codeMode": {"approvalMode": "sometimes"}},
        ["sometimes"],
    ),
    ("toolDiscovery must be an object", {"toolDiscovery": False}, ["false"]),
    ("toolDiscovery.enabled must be true or false", {"toolDiscovery": {"enabled": "yes"}}, ["yes"]),
    (
        "toolDiscovery.deferred must be an array of deferrable Toolkit tool names",
        {"toolDiscovery": {"deferred": "openai_generate_image"}},
        ["openai_generate_image"],
    ),
    (
        "toolDiscovery.deferred must be an array of deferrable Toolkit tool names",
        {"toolDiscovery": {"deferred": [42]}},
        ["42"],
    ),
    (
        "toolDiscovery.deferred must be an array of deferrable Toolkit tool names",
        {"toolDiscovery": {"deferred": ["external_tool"]}},
        ["external_tool"],
    ),
    (
        "toolDiscovery.deferred must be an array of deferrable Toolkit tool names",
        {"toolDiscovery": {"deferred": ["find_tools"]}},
        ["find_tools"],
    ),
    (
        "toolDiscovery.deferred must be an array of deferrable Toolkit tool names",
        {"toolDiscovery": {"deferred": ["Apply_Patch"]}},
        ["Apply_Patch"],
    ),
    (
        "toolDiscovery.deferred must list all six Computer Use tools or none",
        {"toolDiscovery": {"deferred": ["computer_use_click"]}},
        ["computer_use_click"],
    ),
    (
        "toolDiscovery.deferred must list all six Computer Use tools or none",
        {"toolDiscovery": {"deferred": ["openai_generate_image", *COMPUTER_USE_TOOL_NAMES[:5]]}},
        ["openai_generate_image"],
    ),
    (
        "webSearch.backend must be one of auto, native, sidecar",
        {"webSearch": {"backend": "fallback"}},
        ["fallback"],
    ),
    ("webSearch.enabled must be true or false", {"webSearch": {"enabled": "yes"}}, ["yes"]),
    ("webSearch.mode must be one of live, cached", {"webSearch": {"mode": "later"}}, ["later"]),
    (
        "webSearch.contextSize must be one of low, medium, high",
        {"webSearch": {"contextSize": "huge"}},
        ["huge"],
    ),
    (
        "webSearch.sidecarModel must name provider openai or openai-codex and a non-empty model",
        {"webSearch": {"sidecarModel": {"provider": "other", "model": "x"}}},
        ["other", "x"],
    ),
    (
        "webSearch.sidecarModel must name provider openai or openai-codex and a non-empty model",
        {"webSearch": {"sidecarModel": "gpt"}},
        ["gpt"],
    ),
    (
        "webSearch.sidecarModel must name provider openai or openai-codex and a non-empty model",
        {"webSearch": {"sidecarModel": {"provider": "openai", "model": " "}}},
        [],
    ),
    (
        "webSearch.sidecarModel must name provider openai or openai-codex and a non-empty model",
        {"webSearch": {"sidecarModel": {"provider": "openai"}}},
        [],
    ),
    (
        "webSearch.sidecarModel.thinkingLevel must be one of auto, off, minimal, low, medium, "
        "high, xhigh, max",
        {
            "webSearch": {
                "sidecarModel": {
                    "provider": "openai-codex",
                    "model": "gpt-5.4",
                    "thinkingLevel": "extreme",
                }
            }
        },
        ["extreme", "gpt-5.4"],
    ),
    (
        "webSearch.sidecarModel.thinkingLevel must be auto for provider openai",
        {
            "webSearch": {
                "sidecarModel": {"provider": "openai", "model": "gpt-5", "thinkingLevel": "low"}
            }
        },
        ["gpt-5"],
    ),
    ("execution must be an object", {"execution": False}, ["false"]),
    ("execution must be an object", {"execution": []}, ["[]"]),
    ("execution.version must be 1", {"execution": {"version": 2, "rules": []}}, ["2"]),
    ("execution.version must be 1", {"execution": {"version": True, "rules": []}}, ["true"]),
    ("execution.version must be 1", {"execution": {"version": "1", "rules": []}}, []),
    ("execution.version must be 1", {"execution": {"rules": []}}, []),
    ("execution.rules must be an array", {"execution": {"version": 1, "rules": {}}}, []),
    ("execution.rules must be an array", {"execution": {"version": 1}}, []),
    (
        f"execution.rules[0] must {RULE_OBJECT}",
        {"execution": {"version": 1, "rules": ["x"]}},
        ["x"],
    ),
    (
        f"execution.rules[0] must {RULE_OBJECT}",
        {"execution": {"version": 1, "rules": [rule(extra=True)]}},
        ["extra"],
    ),
    (
        f"execution.rules[0] must {RULE_OBJECT}",
        {"execution": {"version": 1, "rules": [rule(patch="yes")]}},
        ["yes"],
    ),
    (
        f"execution.rules[0] must {RULE_OBJECT}",
        {"execution": {"version": 1, "rules": [{"id": "a", "match": "*", "patch": True}]}},
        [],
    ),
    (
        "execution.rules[0].id must be a nonempty string",
        {"execution": {"version": 1, "rules": [rule(id="")]}},
        [],
    ),
    (
        "execution.rules[0].id must be a nonempty string",
        {"execution": {"version": 1, "rules": [rule(id=7)]}},
        ["7"],
    ),
    (
        "execution.rules[1].match must be a nonempty glob",
        {"execution": {"version": 1, "rules": [rule(id="a"), rule(id="b", match="  ")]}},
        [],
    ),
    (
        "execution.rules[1].id must be unique",
        {
            "execution": {
                "version": 1,
                "rules": [
                    rule(id="a", match="gpt*", patch=True, code=True),
                    rule(id="a", match="grok*", patch=True, shell=True),
                ],
            }
        },
        [],
    ),
]


@pytest.mark.parametrize(("detail", "document", "invalid"), REJECTIONS)
def test_rejects_with_exact_detail_and_no_echo(
    detail: str, document: Any, invalid: list[str]
) -> None:
    assert [part for part in invalid if echoes(detail, part)] == []
    with pytest.raises(ConfigValidationError) as info:
        parse_config(document)
    assert str(info.value) == detail


SECTIONS = [
    "webSearch",
    "remoteCompaction",
    "imageGeneration",
    "applyPatch",
    "computerUse",
    "shellSessions",
    "codeMode",
    "toolDiscovery",
]


@pytest.mark.parametrize("key", [*SECTIONS, "execution"])
@pytest.mark.parametrize("value", [None, "x", 1, True, [], [{}]])
def test_non_object_sections_including_null(key: str, value: Any) -> None:
    with pytest.raises(ConfigValidationError, match=rf"^{key} must be an object$"):
        parse_config({key: value})


@pytest.mark.parametrize(
    ("document", "detail"),
    [
        ({"applyPatch": {"enabled": None}}, "applyPatch.enabled must be true or false"),
        ({"debug": None}, "debug must be true or false"),
        (
            {"webSearch": {"backend": None}},
            "webSearch.backend must be one of auto, native, sidecar",
        ),
        (
            {"computerUse": {"approvalMode": None}},
            "computerUse.approvalMode must be one of confirm, always",
        ),
        (
            {"toolDiscovery": {"deferred": None}},
            "toolDiscovery.deferred must be an array of deferrable Toolkit tool names",
        ),
        (
            {
                "webSearch": {
                    "sidecarModel": {"provider": "openai", "model": "m", "thinkingLevel": None}
                }
            },
            "webSearch.sidecarModel.thinkingLevel must be one of auto, off, minimal, low, medium, "
            "high, xhigh, max",
        ),
        ({"execution": {"version": None, "rules": []}}, "execution.version must be 1"),
        ({"execution": {"version": 1, "rules": None}}, "execution.rules must be an array"),
        (
            {"execution": {"version": 1, "rules": [rule(id=None)]}},
            "execution.rules[0].id must be a nonempty string",
        ),
    ],
)
def test_null_is_not_absent(document: dict[str, Any], detail: str) -> None:
    with pytest.raises(ConfigValidationError) as info:
        parse_config(document)
    assert str(info.value) == detail


def test_null_sidecar_model_means_none() -> None:
    assert parse_config({"webSearch": {"sidecarModel": None}}).web_search.sidecar_model is None
    assert parse_config({"webSearch": {}}).web_search.sidecar_model is None


@pytest.mark.parametrize(
    ("document", "detail"),
    [
        # Section shapes are checked before any field, even a field of an earlier section.
        ({"webSearch": {"enabled": "yes"}, "toolDiscovery": 1}, "toolDiscovery must be an object"),
        # The whole execution section is checked before the fields.
        (
            {"webSearch": {"enabled": "yes"}, "execution": {"version": 2}},
            "execution.version must be 1",
        ),
        # A section shape beats execution.
        ({"execution": False, "codeMode": None}, "codeMode must be an object"),
        # Fields follow the section order, debug last.
        (
            {"debug": "x", "codeMode": {"enabled": "x"}, "webSearch": {"mode": "x"}},
            "webSearch.mode must be one of live, cached",
        ),
        (
            {"debug": "x", "toolDiscovery": {"deferred": 1}},
            "toolDiscovery.deferred must be an array of deferrable Toolkit tool names",
        ),
        (
            {"debug": "x", "codeMode": {"approvalMode": "x"}},
            "codeMode.approvalMode must be one of confirm, always",
        ),
        # Within webSearch: enabled, backend, mode, contextSize, sidecarModel.
        (
            {"webSearch": {"sidecarModel": 1, "contextSize": "x", "enabled": "x"}},
            "webSearch.enabled must be true or false",
        ),
        (
            {"webSearch": {"sidecarModel": 1, "contextSize": "x"}},
            "webSearch.contextSize must be one of low, medium, high",
        ),
        # Within sidecarModel the thinking level is checked before provider and model.
        (
            {"webSearch": {"sidecarModel": {"provider": "x", "thinkingLevel": "x"}}},
            "webSearch.sidecarModel.thinkingLevel must be one of auto, off, minimal, low, medium, "
            "high, xhigh, max",
        ),
        # Rules in order; in a rule: shape, id, match, booleans; uniqueness after the rule.
        (
            {"execution": {"version": 1, "rules": [rule(id="", match=""), rule(id="b", patch=1)]}},
            "execution.rules[0].id must be a nonempty string",
        ),
        (
            {"execution": {"version": 1, "rules": [rule(match="", patch=1)]}},
            "execution.rules[0].match must be a nonempty glob",
        ),
        (
            {"execution": {"version": 1, "rules": [rule(id="a"), rule(id="a", match="")]}},
            "execution.rules[1].match must be a nonempty glob",
        ),
        # Within computerUse: enabled before approvalMode.
        (
            {"computerUse": {"approvalMode": "x", "enabled": "x"}},
            "computerUse.enabled must be true or false",
        ),
        # Deferred: membership before the Computer Use group rule.
        (
            {"toolDiscovery": {"deferred": ["computer_use_click", "nope"]}},
            "toolDiscovery.deferred must be an array of deferrable Toolkit tool names",
        ),
    ],
)
def test_check_order(document: dict[str, Any], detail: str) -> None:
    with pytest.raises(ConfigValidationError) as info:
        parse_config(document)
    assert str(info.value) == detail


def test_absent_fields_take_defaults_and_unknown_fields_are_ignored() -> None:
    parsed = parse_config(
        {
            "futureRoot": {"retained": True},
            "webSearch": {"enabled": True, "backend": "sidecar", "futureNested": [1, 2, 3]},
        }
    )
    expected = default_config().model_copy(
        update={
            "web_search": default_config().web_search.model_copy(
                update={"enabled": True, "backend": "sidecar"}
            )
        }
    )
    assert parsed == expected
    assert parse_config({}) == default_config()


def test_sidecar_model_defaults_to_automatic_effort() -> None:
    parsed = parse_config(
        {"webSearch": {"sidecarModel": {"provider": "openai-codex", "model": "gpt-5.4"}}}
    )
    assert parsed.web_search.sidecar_model == SidecarModel(
        provider="openai-codex", model="gpt-5.4", thinking_level="auto"
    )


@pytest.mark.parametrize("mode", ["confirm", "always"])
def test_approval_modes_round_trip(mode: str) -> None:
    assert parse_config({"computerUse": {"approvalMode": mode}}).computer_use.approval_mode == mode
    assert parse_config({"codeMode": {"approvalMode": mode}}).code_mode.approval_mode == mode


def test_deferred_default_custom_duplicates_and_groups() -> None:
    assert parse_config({}).tool_discovery.deferred == (
        "openai_generate_image",
        *COMPUTER_USE_TOOL_NAMES,
    )
    custom = parse_config(
        {"toolDiscovery": {"enabled": True, "deferred": ["wait", "apply_patch", "wait"]}}
    )
    assert custom.tool_discovery.enabled is True
    assert custom.tool_discovery.deferred == ("wait", "apply_patch")
    assert parse_config({"toolDiscovery": {"deferred": []}}).tool_discovery.deferred == ()
    everything = [
        "openai_web_search",
        "openai_generate_image",
        "apply_patch",
        "exec_command",
        "write_stdin",
        "exec",
        "wait",
        *reversed(COMPUTER_USE_TOOL_NAMES),
    ]
    assert parse_config(
        {"toolDiscovery": {"deferred": everything}}
    ).tool_discovery.deferred == tuple(everything)


def test_execution_rules_parse_and_match_is_trimmed() -> None:
    parsed = parse_config(
        {
            "applyPatch": {"enabled": True},
            "shellSessions": {"enabled": True},
            "codeMode": {"enabled": True, "approvalMode": "always"},
            "execution": {
                "version": 1,
                "futureKey": 1,
                "rules": [rule(id="astra", match=" gpt-6-astra ", patch=True, code=True)],
            },
        }
    )
    assert parsed.execution == ExecutionConfig(
        version=1,
        rules=[ExecutionRule(id="astra", match="gpt-6-astra", patch=True, shell=False, code=True)],
    )
    assert parsed.code_mode.approval_mode == "always"
    assert parse_config({"execution": {"version": 1.0, "rules": []}}).execution == ExecutionConfig()


GOLDEN_DEFAULT = """{
  "webSearch": {
    "enabled": false,
    "backend": "auto",
    "mode": "live",
    "contextSize": "medium",
    "sidecarModel": null
  },
  "remoteCompaction": {
    "enabled": false
  },
  "imageGeneration": {
    "enabled": false
  },
  "applyPatch": {
    "enabled": false
  },
  "computerUse": {
    "enabled": false,
    "approvalMode": "confirm"
  },
  "shellSessions": {
    "enabled": false
  },
  "codeMode": {
    "enabled": false,
    "approvalMode": "confirm"
  },
  "toolDiscovery": {
    "enabled": false,
    "deferred": [
      "openai_generate_image",
      "computer_use_list_apps",
      "computer_use_get_app_state",
      "computer_use_click",
      "computer_use_type_text",
      "computer_use_press_key",
      "computer_use_scroll"
    ]
  },
  "debug": false
}
"""


def test_golden_default_document() -> None:
    assert json.dumps(to_json_obj(default_config()), indent=2) + "\n" == GOLDEN_DEFAULT
    assert parse_config(json.loads(GOLDEN_DEFAULT)) == default_config()


def test_spec_example_round_trips_through_parse_and_serialize() -> None:
    document = json.loads(GOLDEN_DEFAULT)
    document["execution"] = {
        "version": 1,
        "rules": [rule(id="astra", match="gpt-6-astra", patch=True, code=True)],
    }
    parsed = parse_config(document)
    out = to_json_obj(parsed)
    assert parse_config(out) == parsed
    # A fresh document with rules comes out in the spec's key order.
    assert list(out) == [
        "webSearch",
        "remoteCompaction",
        "imageGeneration",
        "applyPatch",
        "computerUse",
        "shellSessions",
        "codeMode",
        "execution",
        "toolDiscovery",
        "debug",
    ]


def test_unknown_fields_are_kept_in_place_root_and_nested() -> None:
    raw = {
        "futureRoot": "keep",
        "debug": True,
        "webSearch": {
            "enabled": True,
            "futureNested": {"keep": True},
            "sidecarModel": {
                "provider": "openai",
                "model": "gpt-5",
                "futureModelKey": "keep-model",
            },
        },
        "remoteCompaction": {"futureNested": "keep"},
        "imageGeneration": {"futureNested": "keep"},
        "applyPatch": {"futureNested": "keep"},
        "computerUse": {"futureNested": "keep"},
        "shellSessions": {"futureNested": "keep"},
        "codeMode": {"futureNested": "keep"},
        "toolDiscovery": {"futureNested": "keep"},
    }
    before = json.dumps(raw)
    config = parse_config(raw)
    out = to_json_obj(config, raw)
    assert json.dumps(raw) == before  # the stored document is not mutated
    assert out["futureRoot"] == "keep"
    assert list(out)[:2] == ["futureRoot", "debug"]
    assert out["webSearch"] == {
        "enabled": True,
        "futureNested": {"keep": True},
        "sidecarModel": {
            "provider": "openai",
            "model": "gpt-5",
            "futureModelKey": "keep-model",
            "thinkingLevel": "auto",
        },
        "backend": "auto",
        "mode": "live",
        "contextSize": "medium",
    }
    for key in ["remoteCompaction", "imageGeneration", "applyPatch", "shellSessions"]:
        assert out[key] == {"futureNested": "keep", "enabled": False}
    assert out["computerUse"] == {
        "futureNested": "keep",
        "enabled": False,
        "approvalMode": "confirm",
    }
    assert out["codeMode"] == {"futureNested": "keep", "enabled": False, "approvalMode": "confirm"}
    assert out["toolDiscovery"]["futureNested"] == "keep"
    assert parse_config(out) == config


def test_null_sidecar_drops_the_stored_model_but_keeps_siblings() -> None:
    raw = {
        "webSearch": {
            "enabled": True,
            "futureNested": {"keep": True},
            "sidecarModel": {"provider": "openai-codex", "model": "gpt-5.4", "futureModelKey": "x"},
        }
    }
    out = to_json_obj(default_config(), raw)
    assert out["webSearch"] == {
        "enabled": False,
        "futureNested": {"keep": True},
        "sidecarModel": None,
        "backend": "auto",
        "mode": "live",
        "contextSize": "medium",
    }
    assert list(out["webSearch"]) == [
        "enabled",
        "futureNested",
        "sidecarModel",
        "backend",
        "mode",
        "contextSize",
    ]


def test_execution_save_removes_legacy_switches_and_keeps_approval() -> None:
    raw = {
        "applyPatch": {"enabled": True, "futureNested": 1},
        "shellSessions": {"enabled": True},
        "codeMode": {"enabled": True, "approvalMode": "confirm"},
    }
    config = parse_config(raw).model_copy(
        update={
            "code_mode": parse_config(raw).code_mode.model_copy(update={"approval_mode": "always"}),
            "execution": ExecutionConfig(
                rules=[ExecutionRule(id="grok", match="grok*", patch=True, shell=True, code=False)]
            ),
        }
    )
    out = to_json_obj(config, raw)
    assert out["execution"] == {
        "version": 1,
        "rules": [{"id": "grok", "match": "grok*", "patch": True, "shell": True, "code": False}],
    }
    assert out["applyPatch"] == {"futureNested": 1}
    assert out["shellSessions"] == {}
    assert out["codeMode"] == {"approvalMode": "always"}
    reparsed = parse_config(out)
    assert reparsed.apply_patch.enabled is False
    assert reparsed.code_mode.approval_mode == "always"


def test_execution_unknown_keys_are_kept_and_removing_rules_drops_the_section() -> None:
    raw = {"execution": {"version": 1, "futureKey": "keep", "rules": []}}
    config = parse_config(raw)
    assert to_json_obj(config, raw)["execution"] == {"version": 1, "futureKey": "keep", "rules": []}
    legacy = config.model_copy(update={"execution": None})
    out = to_json_obj(legacy, raw)
    assert "execution" not in out
    assert out["applyPatch"] == {"enabled": False}


def test_models_are_frozen_snapshots() -> None:
    config = default_config()
    with pytest.raises(dataclasses.FrozenInstanceError):
        config.debug = True  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        config.web_search.enabled = True  # type: ignore[misc]
