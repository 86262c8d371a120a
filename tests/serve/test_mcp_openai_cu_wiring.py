"""Web Search, Image Generation and Computer Use behind the MCP server: projection and refusals.

Calls that would reach OpenAI are not made here (the capability tests drive them against
fake servers); these tests pin the wiring: what `tools/list` shows for a given config,
model and credential, and the exact refusal a call to an inactive name gets.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import mcp_types as types
import pytest
from mcp import Client

from pct_runtime.runtime import Runtime
from pct_runtime.serve.mcp.server import PctMCPServer


def text_of(result: types.CallToolResult) -> str:
    block = result.content[0]
    assert isinstance(block, types.TextContent)
    return block.text


@pytest.fixture
def agent(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    directory = tmp_path / "agent"
    (directory / "extensions").mkdir(parents=True)
    (directory / "extensions" / "pi-codex-toolkit.json").write_text(
        json.dumps(
            {
                "webSearch": {
                    "enabled": True,
                    "backend": "sidecar",
                    "sidecarModel": {"provider": "openai", "model": "gpt-5"},
                },
                "imageGeneration": {"enabled": True},
                "computerUse": {"enabled": True},
            }
        ),
        encoding="utf-8",
    )
    return directory


async def names_and_calls(agent: Path, *calls: str) -> tuple[list[str], dict[str, str]]:
    runtime = Runtime(agent_dir=agent, model="openai/gpt-5", platform="linux")
    await runtime.start()
    server = PctMCPServer(runtime)
    answers: dict[str, str] = {}
    async with Client(server.server, mode="legacy") as client:
        listed = [t.name for t in (await client.list_tools()).tools]
        for name in calls:
            args: dict[str, Any] = {"query": "x"} if name == "openai_web_search" else {}
            if name == "openai_generate_image":
                args = {"prompt": "a cat"}
            if name.startswith("computer_use_"):
                args = {"app": "Finder"}
            result = await client.call_tool(name, args)
            assert result.is_error
            answers[name] = text_of(result)
    await runtime.aclose()
    return listed, answers


async def test_without_credentials_the_openai_tools_say_why(agent: Path) -> None:
    listed, answers = await names_and_calls(
        agent, "openai_web_search", "openai_generate_image", "computer_use_list_apps"
    )
    assert listed == []
    assert answers["openai_web_search"] == "OpenAI Web Search is unavailable: missing-openai-auth."
    assert answers["openai_generate_image"] == (
        "OpenAI Image Generation is unavailable: missing-openai-auth."
    )
    assert (
        answers["computer_use_list_apps"] == "Computer Use is not active for the current session."
    )


async def test_with_an_api_key_the_openai_tools_are_listed(agent: Path) -> None:
    (agent / "auth.json").write_text(
        json.dumps({"openai": {"type": "api_key", "key": "sk-test-not-real"}}), encoding="utf-8"
    )
    listed, _ = await names_and_calls(agent)
    assert "openai_web_search" in listed
    assert "openai_generate_image" in listed
    assert not any(name.startswith("computer_use_") for name in listed)  # linux: unsupported


async def test_status_text_of_a_live_session(agent: Path) -> None:
    runtime = Runtime(agent_dir=agent, model="openai/gpt-5", platform="linux")
    await runtime.start()
    session = await runtime.open_session("mcp")
    text = session.status_text()
    assert text.startswith("Pi Codex Toolkit\n")
    assert "Current model: openai/gpt-5" in text
    assert "  reason: unsupported-platform" in text
    live = runtime.live_status_text("pct serve (pid 1, stdio)")
    assert live.startswith("pct serve (pid 1, stdio)\nSessions: 1\n")
    await runtime.aclose()
