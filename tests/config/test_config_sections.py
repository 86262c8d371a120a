"""The config layer's rows (`config/sections.py`) and the decide registry stay in step."""

from __future__ import annotations

from pct_runtime.config.schema import SECTION_KEYS, ToolkitConfig, parse_config, to_json_obj
from pct_runtime.config.sections import SECTIONS, CapabilitySections
from pct_runtime.decide.registry import CAPABILITIES


def test_one_section_per_registry_row_in_status_order() -> None:
    assert tuple(section.KEY for section in SECTIONS) == tuple(row.key for row in CAPABILITIES)


def test_the_typed_fields_are_the_rows() -> None:
    fields = CapabilitySections.model_fields
    assert tuple(fields) == tuple(section.KEY for section in SECTIONS)
    assert all(fields[section.KEY].annotation is section for section in SECTIONS)
    assert tuple(section.JSON_KEY for section in SECTIONS) == SECTION_KEYS


def test_each_row_parses_and_writes_its_own_section() -> None:
    document = {section.JSON_KEY: {"enabled": True} for section in SECTIONS}
    config = parse_config(document)
    for section in SECTIONS:
        assert isinstance(config.section(section.KEY), section)
        assert config.section(section.KEY).enabled
        assert to_json_obj(config)[section.JSON_KEY]["enabled"] is True
    assert isinstance(config, ToolkitConfig)
