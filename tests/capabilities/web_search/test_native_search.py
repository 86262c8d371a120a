"""Native Web Search payload transform: shapes, identity, idempotence, copy-on-write."""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any

import pytest

from pct_runtime.capabilities.web_search import SOURCES_INCLUDE, inject_native_search


@dataclass(frozen=True)
class Settings:
    mode: str = "live"
    context_size: str = "medium"


LIVE = Settings()
CACHED_HIGH = Settings(mode="cached", context_size="high")

# What an embedding agent's providers send: an `openai` Responses body and a Codex body.
OPENAI_PAYLOAD: dict[str, Any] = {
    "model": "gpt-5.4",
    "input": [{"role": "user", "content": [{"type": "input_text", "text": "hi"}]}],
    "stream": True,
    "tools": [{"type": "function", "name": "read", "parameters": {"type": "object"}}],
    "x-unknown": {"keep": [1, 2]},
}
CODEX_PAYLOAD: dict[str, Any] = {
    "model": "gpt-5.4",
    "store": False,
    "stream": True,
    "instructions": "system",
    "input": [],
    "text": {"verbosity": "medium"},
    "include": ["reasoning.encrypted_content"],
    "tool_choice": "auto",
    "parallel_tool_calls": True,
}


def test_injects_tool_include_and_tool_choice_into_openai_payload() -> None:
    original = copy.deepcopy(OPENAI_PAYLOAD)
    out = inject_native_search(OPENAI_PAYLOAD, LIVE)
    assert original == OPENAI_PAYLOAD, "input must not be mutated"
    assert out["tools"] == [
        OPENAI_PAYLOAD["tools"][0],
        {"type": "web_search", "search_context_size": "medium", "external_web_access": True},
    ]
    assert out["include"] == [SOURCES_INCLUDE]
    assert out["tool_choice"] == "auto"
    assert out["x-unknown"] == {"keep": [1, 2]}
    assert out["model"] == "gpt-5.4"
    assert out["stream"] is True


def test_codex_payload_cached_mode_and_context_size() -> None:
    out = inject_native_search(CODEX_PAYLOAD, CACHED_HIGH)
    assert out["tools"] == [
        {"type": "web_search", "search_context_size": "high", "external_web_access": False}
    ]
    assert out["include"] == ["reasoning.encrypted_content", SOURCES_INCLUDE]
    assert out["tool_choice"] == "auto"
    assert out["instructions"] == "system"
    assert out["parallel_tool_calls"] is True


@pytest.mark.parametrize("choice", ["required", "none", None, {"type": "function", "name": "x"}])
def test_existing_tool_choice_is_never_replaced(choice: Any) -> None:
    out = inject_native_search({"tool_choice": choice}, LIVE)
    assert out["tool_choice"] == choice


def test_existing_web_search_keeps_its_fields_and_duplicates_are_dropped() -> None:
    payload = {
        "tools": [
            {"type": "web_search", "external_web_access": False, "filters": {"a": 1}},
            {"type": "function", "name": "f"},
            {"type": "web_search", "search_context_size": "low"},
        ],
        "include": [SOURCES_INCLUDE, "other"],
    }
    out = inject_native_search(payload, LIVE)
    assert out["tools"] == [
        {
            "type": "web_search",
            "search_context_size": "medium",
            "external_web_access": False,
            "filters": {"a": 1},
        },
        {"type": "function", "name": "f"},
    ]
    assert out["include"] == [SOURCES_INCLUDE, "other"]


@pytest.mark.parametrize("payload", [OPENAI_PAYLOAD, CODEX_PAYLOAD, {}, {"tools": []}])
def test_idempotent(payload: dict[str, Any]) -> None:
    once = inject_native_search(payload, LIVE)
    twice = inject_native_search(once, LIVE)
    assert twice == once
    assert twice is once, "an already-injected payload is returned as-is"


@pytest.mark.parametrize(
    "payload",
    [
        None,
        "text",
        [1, 2],
        42,
        {"tools": {"type": "web_search"}},
        {"tools": "web_search"},
        {"include": "sources"},
        {"tools": [], "include": None},
    ],
)
def test_identity_for_unsupported_shapes(payload: Any) -> None:
    assert inject_native_search(payload, LIVE) is payload


def test_identity_when_native_is_not_the_decision() -> None:
    assert inject_native_search(OPENAI_PAYLOAD, None) is OPENAI_PAYLOAD
