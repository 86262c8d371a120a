"""The capability registry's decide table covers exactly what the decision layer decides."""

from __future__ import annotations

from decide_fixtures import plan

from pct_runtime.decide.registry import CAPABILITIES
from pct_runtime.host.names import OWNED_TOOL_NAMES


def test_registry_rows_are_the_decisions_in_status_order() -> None:
    assert tuple(plan({}).decisions) == tuple(row.key for row in CAPABILITIES)


def test_every_owned_tool_belongs_to_exactly_one_row_with_a_refusal() -> None:
    owners = [row for name in OWNED_TOOL_NAMES for row in CAPABILITIES if name in row.tools]
    assert len(owners) == len(OWNED_TOOL_NAMES)
    assert all(row.refusal for row in owners)
    assert sorted(n for row in CAPABILITIES for n in row.tools) == sorted(OWNED_TOOL_NAMES)
