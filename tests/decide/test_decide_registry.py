"""The capability list's rows cover exactly what the decision layer decides."""

from __future__ import annotations

from decide_fixtures import plan

from pct_runtime.capabilities.table import BY_TOOL, CAPABILITIES, MENU_ROWS
from pct_runtime.decide.discovery import atomic_groups, joint_pairs
from pct_runtime.host.pi.names import (
    CODE_MODE_TOOLS,
    COMPUTER_USE_TOOLS,
    DEFERRABLE_TOOL_NAMES,
    FIND_TOOLS_TOOL,
    OWNED_TOOL_NAMES,
    SHELL_TOOLS,
)


def test_registry_rows_are_the_decisions_in_status_order() -> None:
    assert tuple(plan({}).decisions) == tuple(row.key for row in CAPABILITIES)


def test_every_owned_tool_belongs_to_exactly_one_row_with_a_refusal() -> None:
    owners = [row for name in OWNED_TOOL_NAMES for row in CAPABILITIES if name in row.tools]
    assert len(owners) == len(OWNED_TOOL_NAMES)
    assert all(row.refusal for row in owners)
    assert sorted(n for row in CAPABILITIES for n in row.tools) == sorted(OWNED_TOOL_NAMES)


def test_discovery_load_groups_come_from_the_rows() -> None:
    assert atomic_groups(CAPABILITIES) == (COMPUTER_USE_TOOLS,)
    assert joint_pairs(CAPABILITIES) == (SHELL_TOOLS, CODE_MODE_TOOLS)


def test_every_deferrable_name_has_a_row_whose_planner_decides_its_eligibility() -> None:
    assert all(name in BY_TOOL for name in DEFERRABLE_TOOL_NAMES)
    assert FIND_TOOLS_TOOL not in DEFERRABLE_TOOL_NAMES


def test_the_console_menu_lists_every_row_once_with_unique_item_keys() -> None:
    assert sorted(row.key for row in MENU_ROWS) == sorted(row.key for row in CAPABILITIES)
    keys = [entry.key for row in MENU_ROWS for entry in row.menu]
    assert len(keys) == len(set(keys))
    assert all(row.menu for row in CAPABILITIES)
    assert all(e.value is not None for row in MENU_ROWS for e in row.menu if e.kind == "pick")
