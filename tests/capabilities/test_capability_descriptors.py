"""Each capability package's descriptor, as the capability list (`capabilities/table.py`)
loads it from the binding its declaration names."""

from __future__ import annotations

from dataclasses import replace

import pytest

from pct_runtime.capabilities import table as registry
from pct_runtime.capabilities.discovery import catalog
from pct_runtime.capabilities.table import CAPABILITIES
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
    broken = replace(
        CAPABILITIES[0],
        key="no_such_capability",
        binding="pct_runtime.capabilities.no_such_capability.descriptor",
    )
    monkeypatch.setattr(registry, "BINDING_ROWS", (broken, *registry.BINDING_ROWS))
    monkeypatch.setattr(registry, "_loaded", None)
    monkeypatch.setattr(registry, "_modules", {})
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
    declared = {row.key for row in CAPABILITIES if row.probes_host}
    assert declared == probed


def test_every_row_with_tools_names_its_binding_and_binds_once() -> None:
    assert all(row.binding for row in CAPABILITIES if row.tools)
    assert sorted(row.key for row in registry.BINDING_ROWS) == sorted(
        row.key for row in CAPABILITIES if row.binding
    )


def test_fenced_starts_are_tools_of_their_own_row() -> None:
    rows = {row.key: row for row in CAPABILITIES}
    for descriptor in registry.descriptors():
        assert set(descriptor.starts) <= set(rows[descriptor.key].tools), descriptor.key
