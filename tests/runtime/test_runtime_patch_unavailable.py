"""A headless nested apply_patch (`approval-unavailable`) suggests the direct apply_patch
only where the session shows it: execution rules may route Patch through Code Mode only,
and then the hint names what does work (the pct console, or approval always)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pct_runtime.runtime import Runtime, RuntimeSession

PATCH = "*** Begin Patch\n*** Add File: notes.md\n+first line\n*** End Patch"
CELL = (
    f"try:\n    await tools.apply_patch({PATCH!r})\n"
    "except ToolError as e:\n    text(e.code + '|' + e.message)\n"
)
HEAD = (
    "approval-unavailable|Nested apply_patch needs the user's approval, but no interactive UI "
    "can ask in this session. Nothing was changed. "
)


async def open_with(tmp_path: Path, config: dict[str, Any], **kw: Any) -> RuntimeSession:
    agent = tmp_path / "agent"
    (agent / "extensions").mkdir(parents=True)
    (agent / "extensions" / "pi-codex-toolkit.json").write_text(json.dumps(config), "utf-8")
    work = tmp_path / "work"
    work.mkdir()
    return await Runtime(agent_dir=agent, cwd=work, **kw).open_session("mcp")


async def test_with_the_direct_tool_visible_the_hint_names_it(tmp_path: Path) -> None:
    config = {"applyPatch": {"enabled": True}, "codeMode": {"enabled": True}}
    session = await open_with(tmp_path, config)
    try:
        assert "apply_patch" in session.projection.visible
        r = await session.call("exec", {"code": CELL})
        assert r.details["output"] == HEAD + (
            "Call apply_patch directly (not from a cell), or ask the user to set Code Mode "
            "approval to always."
        )
        assert not (tmp_path / "work" / "notes.md").exists()
    finally:
        await session.runtime.aclose()


async def test_with_patch_only_inside_code_mode_the_hint_does_not_name_it(
    tmp_path: Path,
) -> None:
    rules = {
        "version": 1,
        "rules": [{"id": "all", "match": "*", "patch": True, "shell": True, "code": True}],
    }
    session = await open_with(tmp_path, {"execution": rules}, model="openai/gpt-5.4")
    try:
        assert "apply_patch" in session.projection.nested_only
        assert "apply_patch" not in session.projection.visible
        r = await session.call("exec", {"code": CELL})
        assert r.details["output"] == HEAD + (
            "apply_patch is available only inside Code Mode here, so ask the user to open the "
            "pct console (pct-tui) to approve nested patches, or to set Code Mode approval to "
            "always, then retry."
        )
        assert not (tmp_path / "work" / "notes.md").exists()
    finally:
        await session.runtime.aclose()
