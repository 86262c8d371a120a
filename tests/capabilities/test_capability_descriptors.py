"""Each capability package's descriptor, as the capability list (`capabilities/table.py`)
loads it from the binding its declaration names."""

from __future__ import annotations

import importlib
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


def test_host_probes_are_exactly_the_rows_that_name_a_probe_module() -> None:
    declared = {row.key for row in CAPABILITIES if row.probe is not None}
    assert set(registry.host_probes()) == declared == {"computer_use"}
    for row in CAPABILITIES:
        if row.probe is not None:  # a probe module is not the binding a status skips
            assert row.probe != row.binding
            assert registry.host_probes()[row.key] is importlib.import_module(row.probe).PROBE


def test_a_probe_module_that_fails_to_import_drops_only_its_verdict(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    broken = replace(
        CAPABILITIES[0], key="no_such_capability", probe="pct_runtime.capabilities.no_such.probe"
    )
    monkeypatch.setattr(registry, "CAPABILITIES", (broken, *CAPABILITIES))
    monkeypatch.setattr(registry, "_probes", None)
    assert set(registry.host_probes()) == {"computer_use"}


def test_every_row_with_tools_names_its_binding_and_binds_once() -> None:
    assert all(row.binding for row in CAPABILITIES if row.tools)
    assert sorted(row.key for row in registry.BINDING_ROWS) == sorted(
        row.key for row in CAPABILITIES if row.binding
    )


def test_fenced_starts_are_tools_of_their_own_row() -> None:
    rows = {row.key: row for row in CAPABILITIES}
    for descriptor in registry.descriptors():
        assert set(descriptor.starts) <= set(rows[descriptor.key].tools), descriptor.key
