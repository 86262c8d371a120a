"""Each capability package's descriptor, as the registry loads it (capabilities/registry.py)."""

from __future__ import annotations

import pytest

from pct_runtime.capabilities import registry
from pct_runtime.capabilities.discovery import catalog
from pct_runtime.decide.registry import CAPABILITIES
from pct_runtime.host.names import OWNED_TOOL_NAMES


def test_one_descriptor_per_registry_row_with_tools() -> None:
    keys = [descriptor.key for descriptor in registry.descriptors()]
    assert sorted(keys) == sorted(row.key for row in CAPABILITIES if row.tools)


def test_each_descriptor_defines_exactly_its_rows_tools() -> None:
    rows = {row.key: row for row in CAPABILITIES}
    for descriptor in registry.descriptors():
        names = tuple(spec.name for spec in descriptor.specs())
        assert names == rows[descriptor.key].tools, descriptor.key
    assert sorted(catalog.toolkit_specs()) == sorted(OWNED_TOOL_NAMES)


def test_a_capability_that_fails_to_import_disables_only_itself(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    broken = "pct_runtime.capabilities.no_such_capability.descriptor"
    monkeypatch.setattr(registry, "DESCRIPTOR_MODULES", (broken, *registry.DESCRIPTOR_MODULES))
    monkeypatch.setattr(registry, "_loaded", None)
    monkeypatch.setattr(catalog, "_cache", None)
    keys = [descriptor.key for descriptor in registry.descriptors()]
    assert sorted(keys) == sorted(row.key for row in CAPABILITIES if row.tools)
    assert sorted(catalog.toolkit_specs()) == sorted(OWNED_TOOL_NAMES)
