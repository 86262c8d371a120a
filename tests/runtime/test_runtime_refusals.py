"""What a direct call to a known but unreachable name is told: a deferred name whose feature
is off or unavailable gets the feature's own refusal (loading it would be rejected), the
"load it" hint only when `find_tools` would load it; a name the execution rules route only
through Code Mode says how to reach it there."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from pct_runtime.capabilities.base import ToolError
from pct_runtime.host.pi.names import COMPUTER_USE_TOOLS
from pct_runtime.runtime import Runtime, RuntimeSession


async def open_with(tmp_path: Path, config: dict[str, Any], **kw: Any) -> RuntimeSession:
    agent = tmp_path / "agent"
    (agent / "extensions").mkdir(parents=True)
    (agent / "extensions" / "pi-codex-toolkit.json").write_text(json.dumps(config), "utf-8")
    work = tmp_path / "work"
    work.mkdir()
    runtime = Runtime(agent_dir=agent, cwd=work, **kw)
    return await runtime.open_session("mcp")


async def refusal(session: RuntimeSession, name: str, args: dict[str, Any]) -> str:
    with pytest.raises(ToolError) as info:
        await session.call(name, args)
    return info.value.message


async def test_deferred_image_with_the_feature_off_gets_the_feature_refusal(
    tmp_path: Path,
) -> None:
    session = await open_with(
        tmp_path,
        {
            "toolDiscovery": {"enabled": True, "deferred": ["openai_generate_image"]},
            "shellSessions": {"enabled": True},
        },
    )
    try:
        assert await refusal(session, "openai_generate_image", {"prompt": "x"}) == (
            "OpenAI Image Generation is not active for the current model."
        )
    finally:
        await session.runtime.aclose()


async def test_deferred_computer_use_on_an_unsupported_platform_is_not_told_to_load(
    tmp_path: Path,
) -> None:
    session = await open_with(
        tmp_path,
        {
            "computerUse": {"enabled": True},
            "toolDiscovery": {"enabled": True, "deferred": list(COMPUTER_USE_TOOLS)},
        },
        platform="linux",
    )
    try:
        for name in COMPUTER_USE_TOOLS:
            assert await refusal(session, name, {}) == (
                "Computer Use is not active for the current session."
            )
    finally:
        await session.runtime.aclose()


async def test_a_loadable_deferred_name_still_gets_the_load_hint(tmp_path: Path) -> None:
    session = await open_with(
        tmp_path,
        {
            "applyPatch": {"enabled": True},
            "toolDiscovery": {"enabled": True, "deferred": ["apply_patch"]},
        },
    )
    try:
        assert await refusal(session, "apply_patch", {"patch": "x"}) == (
            "apply_patch is deferred by Tool Discovery; "
            'load it with find_tools (load: ["apply_patch"]).'
        )
    finally:
        await session.runtime.aclose()


async def test_a_direct_call_to_a_nested_only_name_points_to_code_mode(tmp_path: Path) -> None:
    rules = {
        "version": 1,
        "rules": [{"id": "all", "match": "*", "patch": True, "shell": True, "code": True}],
    }
    session = await open_with(tmp_path, {"execution": rules}, model="openai/gpt-5.4")
    try:
        assert session.projection.nested_only  # the rule routes patch/shell through exec
        for name in session.projection.nested_only:
            assert await refusal(session, name, {}) == (
                f"{name} is available only inside Code Mode in this session: "
                f"call await tools.{name}(...) from exec."
            )
        assert not (tmp_path / "work" / "x").exists()
    finally:
        await session.runtime.aclose()
