"""Deferred names over a session's life: hidden until loaded, kept across an unchanged
reload and a model change, hidden again in a new or resumed session, forgotten when
discovery is disabled; a `find_tools` conflict restores the normal projection; eager
replacement names stay visible; status counts follow the session's real loads."""

from __future__ import annotations

from pathlib import Path

import pytest
from discovery_support import CODEX, EchoTool, discovery, find, make_runtime, open_one, write_config

from pct_runtime.capabilities.base import ToolError
from pct_runtime.runtime import RuntimeSession

PATCH_CFG = discovery(["apply_patch", "exec_command", "write_stdin"], applyPatch={"enabled": True})
PATCH = "*** Begin Patch\n*** Add File: notes.txt\n+hello\n*** End Patch"


def discovery_status(session: RuntimeSession) -> list[str]:
    text = session.status_text()
    return text.split("Tool Discovery:\n", 1)[1].splitlines()[:5]


async def test_deferred_name_is_hidden_until_loaded_then_callable(tmp_path: Path) -> None:
    runtime, session = await open_one(tmp_path, PATCH_CFG)
    assert session.projection.visible == ("find_tools",)
    with pytest.raises(ToolError) as info:
        await session.call("apply_patch", {"patch": PATCH})
    assert info.value.message == (
        "apply_patch is deferred by Tool Discovery; "
        'load it with find_tools (load: ["apply_patch"]).'
    )
    assert not (tmp_path / "work" / "notes.txt").exists()
    assert await find(session, load=["apply_patch"]) == "Loaded: apply_patch"
    assert list(session.projection.visible) == ["find_tools", "apply_patch"]
    result = await session.call("apply_patch", {"patch": PATCH})
    assert result.text == "Applied patch:\n- add notes.txt"
    await runtime.aclose()


async def test_loading_is_additive_and_idempotent(tmp_path: Path) -> None:
    cfg = discovery(["apply_patch"], applyPatch={"enabled": True}, shellSessions={"enabled": True})
    runtime, session = await open_one(tmp_path, cfg)
    before = session.projection.visible
    assert {"exec_command", "write_stdin"} <= set(before)  # not deferred: normal projection
    changes: list[tuple[str, ...]] = []
    session.subscribe(lambda s: changes.append(s.projection.visible))
    assert await find(session, load=["apply_patch"]) == "Loaded: apply_patch"
    assert await find(session, load=["apply_patch"]) == "Loaded: apply_patch"
    assert len(changes) == 1  # the second load changed nothing
    assert session.projection.visible == (*before, "apply_patch")
    await runtime.aclose()


async def test_status_counts_follow_the_session_loads(tmp_path: Path) -> None:
    runtime, session = await open_one(tmp_path, PATCH_CFG)
    assert discovery_status(session) == [
        "  configured: on",
        "  effective: active",
        "  reason: ",
        "  managed deferred tools: 3",
        "  loaded this session: 0",
    ]
    assert "Apply Patch:\n  configured: on\n  effective: deferred\n" in session.status_text()
    await find(session, load=["apply_patch"])
    assert discovery_status(session)[3:] == [
        "  managed deferred tools: 3",
        "  loaded this session: 1",
    ]
    assert "Apply Patch:\n  configured: on\n  effective: active\n" in session.status_text()
    await runtime.aclose()


async def test_loads_survive_an_unchanged_reload_and_a_model_change(tmp_path: Path) -> None:
    runtime, session = await open_one(tmp_path, PATCH_CFG)
    await find(session, load=["apply_patch"])
    outcome = await runtime.reload()
    assert outcome.ok
    assert "apply_patch" in session.projection.visible
    await session.set_model(None)
    assert "apply_patch" in session.projection.visible
    await session.set_model(CODEX)
    assert "apply_patch" in session.projection.visible
    assert discovery_status(session)[4] == "  loaded this session: 1"
    await runtime.aclose()


async def test_new_and_resumed_sessions_hide_deferred_names_again(tmp_path: Path) -> None:
    runtime = await make_runtime(tmp_path, PATCH_CFG)
    first = await runtime.open_session("mcp", model=CODEX, session_id="conversation-1")
    await find(first, load=["apply_patch"])
    assert "apply_patch" in first.projection.visible
    other = await runtime.open_session("mcp", model=CODEX)
    assert "apply_patch" not in other.projection.visible
    assert discovery_status(other)[4] == "  loaded this session: 0"
    await first.close()
    resumed = await runtime.open_session("mcp", model=CODEX, session_id="conversation-1")
    assert "apply_patch" not in resumed.projection.visible
    assert resumed.host.discovered == set()
    await runtime.aclose()


async def test_disabling_discovery_restores_and_forgets(tmp_path: Path) -> None:
    runtime, session = await open_one(tmp_path, PATCH_CFG)
    await find(session, load=["apply_patch"])
    off = {**PATCH_CFG, "toolDiscovery": {"enabled": False, "deferred": ["apply_patch"]}}
    write_config(tmp_path, off)
    assert (await runtime.reload()).ok
    assert "find_tools" not in session.projection.visible
    assert "apply_patch" in session.projection.visible  # normal projection restored
    assert session.host.discovered == set()
    assert discovery_status(session)[:2] == ["  configured: off", "  effective: off"]
    assert discovery_status(session)[3:] == [
        "  managed deferred tools: 0",
        "  loaded this session: 0",
    ]
    with pytest.raises(ToolError) as info:
        await session.call("find_tools", {"query": "patch"})
    assert info.value.message == "Tool discovery is not enabled."
    write_config(tmp_path, PATCH_CFG)
    assert (await runtime.reload()).ok
    assert "apply_patch" not in session.projection.visible  # hidden again after re-enabling
    await runtime.aclose()


async def test_a_find_tools_conflict_restores_the_normal_projection(tmp_path: Path) -> None:
    foreign = EchoTool("find_tools", "Another extension's finder.")
    runtime, session = await open_one(tmp_path, PATCH_CFG, extra_tools=[foreign])
    assert "apply_patch" in session.projection.visible
    assert (await session.call("find_tools", {"query": "x"})).text == "find_tools ran"
    status = discovery_status(session)
    assert status == [
        "  configured: on",
        "  effective: unavailable",
        "  reason: conflicting-tool-name",
        "  managed deferred tools: 0",
        "  loaded this session: 0",
    ]
    await runtime.aclose()
    runtime, session = await open_one(tmp_path, PATCH_CFG, allowlist=["apply_patch"])
    assert session.projection.visible == ("apply_patch",)
    assert discovery_status(session)[2] == "  reason: conflicting-tool-name"
    await runtime.aclose()


async def test_eager_replacement_names_stay_visible_when_deferred(tmp_path: Path) -> None:
    cfg = discovery(
        ["apply_patch", "exec_command", "write_stdin"],
        execution={
            "version": 1,
            "rules": [{"id": "all", "match": "*", "patch": True, "shell": True, "code": False}],
        },
    )
    runtime, session = await open_one(tmp_path, cfg)
    assert {"apply_patch", "exec_command", "write_stdin"} <= set(session.projection.visible)
    assert "- apply_patch [active]" in await find(session, query="apply_patch")
    assert await find(session, load=["apply_patch"]) == "Loaded: apply_patch"
    await runtime.aclose()


async def test_eligibility_is_rechecked_at_every_call(tmp_path: Path) -> None:
    cfg = discovery(["apply_patch"])
    runtime, session = await open_one(tmp_path, cfg)
    assert await find(session, load=["apply_patch"]) == "Rejected:\n- apply_patch: disabled"
    assert "- apply_patch [unavailable: disabled]" in await find(session, query="patch")
    write_config(tmp_path, discovery(["apply_patch"], applyPatch={"enabled": True}))
    assert (await runtime.reload()).ok
    assert "- apply_patch [eligible]" in await find(session, query="patch")
    assert await find(session, load=["apply_patch"]) == "Loaded: apply_patch"
    await runtime.aclose()


async def test_a_disabled_feature_removes_only_its_name(tmp_path: Path) -> None:
    cfg = discovery(
        ["apply_patch", "exec_command", "write_stdin"],
        applyPatch={"enabled": True},
        shellSessions={"enabled": True},
    )
    runtime, session = await open_one(tmp_path, cfg)
    await find(session, load=["apply_patch", "exec_command"])
    assert {"apply_patch", "exec_command"} <= set(session.projection.visible)
    write_config(tmp_path, {**cfg, "applyPatch": {"enabled": False}})
    assert (await runtime.reload()).ok
    assert "apply_patch" not in session.projection.visible
    assert "exec_command" in session.projection.visible
    await runtime.aclose()
