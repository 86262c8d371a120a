"""The runtime's bindings and the capability registry describe the same tools."""

from __future__ import annotations

from pct_runtime.capabilities.table import CAPABILITIES
from pct_runtime.runtime import default_bindings


def test_every_binding_serves_exactly_its_registry_rows_tools() -> None:
    bound = {binding.capability: binding.names for binding in default_bindings()}
    assert bound == {row.key: row.tools for row in CAPABILITIES if row.tools}
