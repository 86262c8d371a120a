"""The invocation hooks run once per call, in one place: the runtime's call pipeline.

They see the call after the tool's `prepare` (normalized arguments), so a tool that refuses
there, like the `read-only` apply_patch, refuses before any hook; a one-phase tool on a
hooked name gets them too, before it sees the call.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from pct_runtime.capabilities.apply_patch.readonly import ReadOnlyPatchTool
from pct_runtime.capabilities.base import ToolError
from pct_runtime.invocation import InvocationHooks
from pct_runtime.runtime import CapabilityBinding, Runtime
from tests.serve.serve_doubles import FakeApplyPatch


@pytest.fixture
def agent_dir(tmp_path: Path) -> Path:
    d = tmp_path / "agent"
    (d / "extensions").mkdir(parents=True)
    (d / "extensions" / "pi-codex-toolkit.json").write_text(
        json.dumps({"applyPatch": {"enabled": True}}), encoding="utf-8"
    )
    return d


def _recording_hooks(calls: list[dict[str, Any]]) -> InvocationHooks:
    def policy(call: Any) -> Any:
        calls.append(dict(call))
        return {"allow": True}

    return InvocationHooks(policy=policy)


async def test_read_only_patch_is_refused_before_any_hook(agent_dir: Path) -> None:
    patch = FakeApplyPatch()
    calls: list[dict[str, Any]] = []
    binding = CapabilityBinding(
        "apply_patch", ("apply_patch",), lambda s: [ReadOnlyPatchTool(patch)]
    )
    async with Runtime(
        agent_dir=agent_dir, hooks=_recording_hooks(calls), bindings=[binding], cwd=agent_dir
    ) as runtime:
        session = await runtime.open_session("embedded")
        with pytest.raises(ToolError) as info:
            await session.call("apply_patch", {"patch": "*** Begin Patch\n*** End Patch"})
        assert info.value.code == "sandbox-read-only"
        assert calls == []
        assert patch.contexts == []


async def test_a_one_phase_tool_gets_the_hooks_once_from_the_pipeline(
    agent_dir: Path,
) -> None:
    patch = FakeApplyPatch()
    calls: list[dict[str, Any]] = []
    # A one-phase tool: the pipeline still runs the hooks, once, before it sees the call.
    binding = CapabilityBinding("apply_patch", ("apply_patch",), lambda s: [patch])
    async with Runtime(
        agent_dir=agent_dir, hooks=_recording_hooks(calls), bindings=[binding], cwd=agent_dir
    ) as runtime:
        session = await runtime.open_session("embedded")
        await session.call("apply_patch", {"patch": "*** Begin Patch\n*** End Patch"})
        assert calls == [{"tool": "apply_patch", "path": "direct", "cwd": str(agent_dir)}]
        assert len(patch.contexts) == 1
