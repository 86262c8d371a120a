"""`find_tools` arguments, exact texts and call flow over a recording backend."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from pct_runtime.capabilities.base import CallContext, ToolError
from pct_runtime.capabilities.discovery import (
    LOAD_HINT_TEXT,
    MISSING_ARGUMENTS_TEXT,
    NO_MATCHES_TEXT,
    NOT_ENABLED_TEXT,
    CatalogEntry,
    FindToolsTool,
    LoadOutcome,
    find_tools_spec,
    format_load,
    format_matches,
    validate_arguments,
)
from pct_runtime.capabilities.discovery.search import Match


class RecordingBackend:
    def __init__(self, entries: Sequence[CatalogEntry], *, available: bool = True) -> None:
        self.entries = list(entries)
        self.enabled = available
        self.loads: list[tuple[str, ...]] = []

    def available(self) -> bool:
        return self.enabled

    def catalog(self) -> Sequence[CatalogEntry]:
        return self.entries

    async def load(self, names: Sequence[str]) -> LoadOutcome:
        self.loads.append(tuple(names))
        loaded = tuple(n for n in names if any(e.name == n for e in self.entries))
        for index, entry in enumerate(self.entries):
            if entry.name in loaded:
                self.entries[index] = CatalogEntry(entry.name, entry.description, "active")
        rejected = tuple((n, "not-managed") for n in names if n not in loaded)
        return LoadOutcome(loaded, rejected)


ENTRIES = [
    CatalogEntry("openai_generate_image", "Generate one PNG image from a prompt.", "eligible"),
    CatalogEntry("computer_use_click", "Click an element of an app.", "unavailable: disabled"),
    CatalogEntry("apply_patch", "Edit files with a patch.", "active"),
]


def ctx(tmp_path: Path) -> CallContext:
    return CallContext(cwd=tmp_path)


def test_schema_matches_the_reference() -> None:
    spec = find_tools_spec()
    assert spec.name == "find_tools"
    assert spec.label == "Find Tools"
    assert spec.sequential is True
    schema = spec.input_schema
    assert schema["additionalProperties"] is False
    assert schema["properties"]["query"] == {
        "type": "string",
        "minLength": 1,
        "description": schema["properties"]["query"]["description"],
    }
    load = schema["properties"]["load"]
    assert load["type"] == "array"
    assert load["minItems"] == 1
    assert load["uniqueItems"] is True
    assert load["items"] == {"type": "string", "minLength": 1}
    assert "required" not in schema  # one-of is checked with the exact text instead


@pytest.mark.parametrize(
    ("args", "text"),
    [
        ({}, MISSING_ARGUMENTS_TEXT),
        ({"load": []}, MISSING_ARGUMENTS_TEXT),
        ({"query": None, "load": None}, MISSING_ARGUMENTS_TEXT),
        ({"query": ""}, "find_tools `query` must be a non-empty string."),
        ({"query": "   "}, "find_tools `query` must be a non-empty string."),
        ({"query": 3}, "find_tools `query` must be a non-empty string."),
        ({"load": "apply_patch"}, "find_tools `load` must be an array of exact tool names."),
        ({"load": ["a", 1]}, "find_tools `load` entries must be non-empty tool-name strings."),
        ({"load": [""]}, "find_tools `load` entries must be non-empty tool-name strings."),
        ({"load": ["a", "b", "a"]}, "find_tools `load` lists a name twice: a."),
        (
            {"query": "x", "load": []},
            "find_tools `load` must list at least one tool name, or be omitted.",
        ),
        ({"query": "x", "names": 1}, "find_tools accepts only `query` and `load`; remove: names."),
    ],
)
def test_malformed_arguments_are_rejected(args: dict[str, Any], text: str) -> None:
    with pytest.raises(ToolError) as info:
        validate_arguments(args)
    assert info.value.code == "invalid-arguments"
    assert info.value.message == text


async def test_malformed_arguments_fail_before_anything_runs(tmp_path: Path) -> None:
    backend = RecordingBackend(ENTRIES, available=False)
    tool = FindToolsTool(backend)
    with pytest.raises(ToolError) as info:
        await tool({"load": ["x", "x"]}, ctx(tmp_path))
    assert info.value.code == "invalid-arguments"  # before the availability check
    assert backend.loads == []


async def test_disabled_discovery_fails_with_the_exact_text(tmp_path: Path) -> None:
    backend = RecordingBackend(ENTRIES, available=False)
    with pytest.raises(ToolError) as info:
        await FindToolsTool(backend)({"query": "image"}, ctx(tmp_path))
    assert info.value.message == NOT_ENABLED_TEXT == "Tool discovery is not enabled."
    assert backend.loads == []


def test_match_and_load_texts() -> None:
    assert format_matches([]) == NO_MATCHES_TEXT == "No matching managed tools."
    matches = [
        Match("a", "eligible", "Does a.", 0, 1),
        Match("b", "unavailable: disabled", "Does b.", 4, 1),
    ]
    assert format_matches(matches) == (
        "Matches (2):\n- a [eligible] Does a.\n- b [unavailable: disabled] Does b.\n"
        "Load eligible matches to expose them on the next turn."
    )
    assert LOAD_HINT_TEXT == "Load eligible matches to expose them on the next turn."
    only_active = [Match("c", "active", "Does c.", 0, 1)]
    assert format_matches(only_active) == "Matches (1):\n- c [active] Does c."
    assert format_matches([Match("d", "active", "", 0, 1)]) == "Matches (1):\n- d [active]"
    assert format_load(LoadOutcome(("a", "b"), ())) == "Loaded: a, b"
    assert format_load(LoadOutcome((), (("x", "not-managed"), ("y", "disabled")))) == (
        "Rejected:\n- x: not-managed\n- y: disabled"
    )
    assert format_load(LoadOutcome(("a",), (("x", "not-managed"),))) == (
        "Loaded: a\nRejected:\n- x: not-managed"
    )


async def test_query_lists_states_and_details(tmp_path: Path) -> None:
    result = await FindToolsTool(RecordingBackend(ENTRIES))({"query": "image"}, ctx(tmp_path))
    assert result.text == (
        "Matches (1):\n- openai_generate_image [eligible] Generate one PNG image from a prompt.\n"
        + LOAD_HINT_TEXT
    )
    assert result.details == {
        "matches": [
            {
                "name": "openai_generate_image",
                "state": "eligible",
                "summary": "Generate one PNG image from a prompt.",
            }
        ]
    }
    none = await FindToolsTool(RecordingBackend(ENTRIES))({"query": "kazoo"}, ctx(tmp_path))
    assert none.text == NO_MATCHES_TEXT


async def test_load_runs_before_query_and_rejections_do_not_fail(tmp_path: Path) -> None:
    backend = RecordingBackend(ENTRIES)
    result = await FindToolsTool(backend)(
        {"load": ["openai_generate_image", "bash"], "query": "image"}, ctx(tmp_path)
    )
    assert backend.loads == [("openai_generate_image", "bash")]
    assert result.text == (
        "Loaded: openai_generate_image\nRejected:\n- bash: not-managed\n\n"
        "Matches (1):\n- openai_generate_image [active] Generate one PNG image from a prompt."
    )
    assert result.details["loaded"] == ["openai_generate_image"]
    assert result.details["rejected"] == [{"name": "bash", "reason": "not-managed"}]
