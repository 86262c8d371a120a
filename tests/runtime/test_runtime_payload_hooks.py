"""Embedded sessions' payload hooks follow the decisions; MCP sessions are never touched."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pct_runtime.runtime import Runtime


@pytest.fixture
def agent(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    directory = tmp_path / "agent"
    (directory / "extensions").mkdir(parents=True)
    (directory / "extensions" / "pi-codex-toolkit.json").write_text(
        json.dumps({"webSearch": {"enabled": True, "backend": "native", "contextSize": "high"}}),
        encoding="utf-8",
    )
    (directory / "auth.json").write_text(
        json.dumps({"openai": {"type": "api_key", "key": "sk-test-not-real"}}), encoding="utf-8"
    )
    return directory


async def test_native_search_is_injected_only_in_embedded_sessions(agent: Path) -> None:
    payload = {"model": "gpt-5", "input": [], "tools": []}
    async with Runtime(agent_dir=agent, model="openai/gpt-5") as runtime:
        embedded = await runtime.open_session("embedded")
        changed = await embedded.before_provider_request(payload)
        assert changed["tools"] == [
            {"type": "web_search", "search_context_size": "high", "external_web_access": True}
        ]
        assert payload["tools"] == []  # never mutated
        mcp = await runtime.open_session("mcp")
        assert await mcp.before_provider_request(payload) is payload
        assert await mcp.before_compact(object()) is None


async def test_no_injection_when_the_decision_is_not_native(agent: Path) -> None:
    payload = {"model": "x", "input": [], "tools": []}
    async with Runtime(agent_dir=agent, model="openai-codex/gpt-5.1") as runtime:
        session = await runtime.open_session("embedded")  # codex route without OAuth
        assert await session.before_provider_request(payload) is payload
