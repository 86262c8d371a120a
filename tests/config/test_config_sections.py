"""The config layer's rows (`config/sections.py`) and the decide registry stay in step."""

from __future__ import annotations

import dataclasses
import typing

import pytest

from pct_runtime.capabilities.table import CAPABILITIES
from pct_runtime.config import ConfigValidationError
from pct_runtime.config.schema import SECTION_KEYS, ToolkitConfig, parse_config, to_json_obj
from pct_runtime.config.sections import COMPUTER_USE_TOOL_NAMES, SECTIONS, CapabilitySections


def test_one_section_per_registry_row_in_status_order() -> None:
    assert tuple(section.KEY for section in SECTIONS) == tuple(row.key for row in CAPABILITIES)


def test_the_typed_fields_are_the_rows() -> None:
    fields = [field.name for field in dataclasses.fields(CapabilitySections)]
    assert fields == [section.KEY for section in SECTIONS]
    hints = typing.get_type_hints(CapabilitySections)
    assert all(hints[section.KEY] is section for section in SECTIONS)
    assert tuple(section.JSON_KEY for section in SECTIONS) == SECTION_KEYS


def test_each_row_parses_and_writes_its_own_section() -> None:
    document = {section.JSON_KEY: {"enabled": True} for section in SECTIONS}
    config = parse_config(document)
    for section in SECTIONS:
        assert isinstance(config.section(section.KEY), section)
        assert config.section(section.KEY).enabled
        assert to_json_obj(config)[section.JSON_KEY]["enabled"] is True
    assert isinstance(config, ToolkitConfig)


def test_picker_edits_return_a_new_config_and_leave_the_old_one() -> None:
    base = ToolkitConfig()
    picked = base.with_search_executor("openai-codex", "gpt-5.1-codex-max")
    assert base.search_executor() is None
    executor = picked.search_executor()
    assert executor is not None
    assert executor.thinking_level == "auto"
    high = picked.with_search_effort("high")
    again = high.with_search_executor("openai-codex", "gpt-5.1-codex-max")
    assert again.search_executor() == high.search_executor()  # same model keeps its level
    assert base.with_search_effort("high") == base  # no executor: nothing to set
    assert high.with_search_executor(None, None).search_executor() is None

    deferred = base.with_deferred_tools(["openai_generate_image"])
    assert deferred.deferred_tools() == ("openai_generate_image",)
    with pytest.raises(ConfigValidationError):
        base.with_deferred_tools([COMPUTER_USE_TOOL_NAMES[0]])  # all six or none
    assert base.deferred_tools() == ToolkitConfig().deferred_tools()
