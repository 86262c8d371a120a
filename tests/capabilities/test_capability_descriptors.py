"""Each capability package's descriptor, as `capabilities/descriptor_table.py` loads it."""

from __future__ import annotations

import pytest

from pct_runtime.capabilities import descriptor_table as registry
from pct_runtime.capabilities.discovery import catalog
from pct_runtime.decide.capability_table import CAPABILITIES
from pct_runtime.host.pi.names import OWNED_TOOL_NAMES


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


def test_host_probe_modules_are_exactly_the_descriptors_with_a_probe() -> None:
    probed = {d.key for d in registry.descriptors() if d.probe is not None}
    assert {d.key for d in registry.host_probes()} == probed
    monkeypatched = registry._loaded
    try:
        registry._loaded = None  # `pct status`: only the probe modules load
        assert {d.key for d in registry.host_probes()} == probed
    finally:
        registry._loaded = monkeypatched


def test_fenced_starts_are_tools_of_their_own_row() -> None:
    rows = {row.key: row for row in CAPABILITIES}
    for descriptor in registry.descriptors():
        assert set(descriptor.starts) <= set(rows[descriptor.key].tools), descriptor.key
