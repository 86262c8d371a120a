"""Properties over generated documents: only ConfigValidationError, fixed details, round trips."""

from __future__ import annotations

import json
import re
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from pct_runtime.config import ConfigValidationError, parse_config, to_json_obj
from pct_runtime.config.schema import (
    COMPUTER_USE_TOOL_NAMES,
    DEFERRABLE_TOOL_NAMES,
    ToolkitConfig,
)

scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-3, 3),
    st.sampled_from(
        [
            "auto",
            "native",
            "sidecar",
            "live",
            "cached",
            "low",
            "medium",
            "high",
            "confirm",
            "always",
            "openai",
            "openai-codex",
            "off",
            "max",
            "gpt-5",
            " ",
            "",
            "*",
            "secret-🔑",
        ]
    ),
)
json_values = st.recursive(
    scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3),
        st.dictionaries(st.sampled_from(["x", "enabled", "id"]), inner, max_size=3),
    ),
    max_leaves=6,
)
rule = st.fixed_dictionaries(
    {},
    optional={
        "id": st.one_of(st.sampled_from(["a", "b", " "]), json_values),
        "match": st.one_of(st.sampled_from(["*", "gpt-?", "openai/*"]), json_values),
        "patch": st.one_of(st.booleans(), json_values),
        "shell": st.booleans(),
        "code": st.booleans(),
        "extra": json_values,
    },
)


def section(fields: dict[str, st.SearchStrategy[Any]]) -> st.SearchStrategy[Any]:
    good = st.fixed_dictionaries({}, optional={**fields, "futureKey": json_values})
    return st.one_of(good, good, good, json_values)


documents = st.fixed_dictionaries(
    {},
    optional={
        "webSearch": section(
            {
                "enabled": st.one_of(st.booleans(), json_values),
                "backend": st.one_of(st.sampled_from(["auto", "native", "sidecar"]), json_values),
                "mode": st.sampled_from(["live", "cached", "later"]),
                "contextSize": st.sampled_from(["low", "medium", "high", "huge"]),
                "sidecarModel": st.one_of(
                    st.none(),
                    st.fixed_dictionaries(
                        {},
                        optional={
                            "provider": st.sampled_from(["openai", "openai-codex", "other"]),
                            "model": st.sampled_from(["gpt-5", " ", ""]),
                            "thinkingLevel": st.sampled_from(["auto", "low", "max", "extreme"]),
                            "futureModelKey": json_values,
                        },
                    ),
                    json_values,
                ),
            }
        ),
        "remoteCompaction": section({"enabled": st.one_of(st.booleans(), json_values)}),
        "applyPatch": section({"enabled": st.booleans()}),
        "computerUse": section(
            {"enabled": st.booleans(), "approvalMode": st.sampled_from(["confirm", "always", "x"])}
        ),
        "codeMode": section(
            {"enabled": st.booleans(), "approvalMode": st.sampled_from(["confirm", "x"])}
        ),
        "toolDiscovery": section(
            {
                "enabled": st.booleans(),
                "deferred": st.one_of(
                    st.lists(st.sampled_from([*DEFERRABLE_TOOL_NAMES, "find_tools"]), max_size=14),
                    st.just(list(COMPUTER_USE_TOOL_NAMES)),
                    json_values,
                ),
            }
        ),
        "execution": st.one_of(
            st.fixed_dictionaries(
                {"version": st.sampled_from([1, 1, 1, 2, True, "1"])},
                optional={
                    "rules": st.one_of(st.lists(rule, max_size=3), json_values),
                    "futureKey": json_values,
                },
            ),
            json_values,
        ),
        "debug": st.one_of(st.booleans(), json_values),
        "futureRoot": json_values,
    },
)

DETAIL = re.compile(
    r"^(configuration|webSearch|remoteCompaction|imageGeneration|applyPatch|computerUse|"
    r"shellSessions|codeMode|toolDiscovery|execution|debug)"
    r"(\.[A-Za-z]+|\.rules\[\d+\](\.(id|match))?)*"
    r" must [A-Za-z ,0-9-]+$"
)


def _as_saved(config: ToolkitConfig) -> ToolkitConfig:
    """The spec: once `execution` exists, a save removes `applyPatch.enabled`,
    `shellSessions.enabled` and `codeMode.enabled` (the rules alone decide), so those three
    read back as their default."""
    if config.execution is None:
        return config
    return config.model_copy(
        update={
            "apply_patch": config.apply_patch.model_copy(update={"enabled": False}),
            "shell_sessions": config.shell_sessions.model_copy(update={"enabled": False}),
            "code_mode": config.code_mode.model_copy(update={"enabled": False}),
        }
    )


def test_a_save_with_rules_drops_the_legacy_switches() -> None:
    document = {"applyPatch": {"enabled": True}, "execution": {"version": 1, "rules": []}}
    config = parse_config(document)
    saved = to_json_obj(config, document)
    assert saved["applyPatch"] == {}
    assert parse_config(saved) == _as_saved(config)
    assert _as_saved(config) != config


@settings(max_examples=200, deadline=None)
@given(documents)
def test_parse_only_raises_fixed_details_and_round_trips(document: dict[str, Any]) -> None:
    try:
        config = parse_config(document)
    except ConfigValidationError as exc:
        detail = str(exc)
        assert DETAIL.match(detail), detail
        assert "secret" not in detail
        return
    saved = to_json_obj(config, document)
    expected = _as_saved(config)
    assert parse_config(saved) == expected
    assert parse_config(json.loads(json.dumps(saved))) == expected
    # Unknown root keys survive the save.
    if "futureRoot" in document:
        assert saved["futureRoot"] == document["futureRoot"]
