"""The call pipeline's steps as a direct call takes them: prepare, hooks, approval, execute.

A tool's `prepare` may say what a person must approve; the pipeline asks through the
session's routed UI before `execute`, refuses with `approval-unavailable` when no one can
be asked and with `approval-denied` on a no, and nothing runs in either case. The hooks
see the directory `prepare` resolved, once.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from pct_runtime.capabilities.base import (
    Approval,
    CallContext,
    Prepared,
    ToolError,
    ToolResult,
    ToolSpec,
)
from pct_runtime.invocation import InvocationHooks
from pct_runtime.runtime import CapabilityBinding, Runtime
from tests.serve.serve_doubles import ConsoleUI


class AskingPatch:
    """An `apply_patch` stand-in whose `prepare` asks for approval and names a directory."""

    spec = ToolSpec("apply_patch", "Apply Patch", "test double", {"type": "object"})

    def __init__(self, root: Path) -> None:
        self.root = root
        self.executed: list[CallContext] = []

    async def prepare(self, args: Any, ctx: CallContext) -> Prepared:
        return Prepared(dict(args), cwd=self.root / "sub", approval=Approval("Apply?", "- add a"))

    async def execute(self, prepared: Prepared, ctx: CallContext) -> ToolResult:
        self.executed.append(ctx)
        return ToolResult("Applied patch:\n- add a")


@pytest.fixture
def agent_dir(tmp_path: Path) -> Path:
    d = tmp_path / "agent"
    (d / "extensions").mkdir(parents=True)
    (d / "extensions" / "pi-codex-toolkit.json").write_text(
        json.dumps({"applyPatch": {"enabled": True}}), encoding="utf-8"
    )
    return d


def _runtime(agent_dir: Path, tool: AskingPatch, seen: list[dict[str, Any]]) -> Runtime:
    def policy(call: Any) -> Any:
        seen.append(dict(call))
        return {"allow": True}

    binding = CapabilityBinding("apply_patch", ("apply_patch",), lambda s: [tool])
    return Runtime(
        agent_dir=agent_dir, hooks=InvocationHooks(policy=policy), bindings=[binding], cwd=agent_dir
    )


async def test_no_one_to_ask_is_approval_unavailable_after_the_hooks(agent_dir: Path) -> None:
    tool = AskingPatch(agent_dir)
    seen: list[dict[str, Any]] = []
    async with _runtime(agent_dir, tool, seen) as runtime:
        session = await runtime.open_session("mcp")
        with pytest.raises(ToolError) as info:
            await session.call("apply_patch", {"patch": "p"})
        assert info.value.code == "approval-unavailable"
        assert tool.executed == []
        assert seen == [{"tool": "apply_patch", "path": "direct", "cwd": str(agent_dir / "sub")}]


@pytest.mark.parametrize("answer", [True, False])
async def test_the_routed_ui_answers_before_anything_runs(agent_dir: Path, answer: bool) -> None:
    tool = AskingPatch(agent_dir)
    ui = ConsoleUI(answer)
    async with _runtime(agent_dir, tool, []) as runtime:
        session = await runtime.open_session("mcp", ui=ui)
        if answer:
            result = await session.call("apply_patch", {"patch": "p"})
            assert result.text == "Applied patch:\n- add a"
            assert len(tool.executed) == 1
        else:
            with pytest.raises(ToolError) as info:
                await session.call("apply_patch", {"patch": "p"})
            assert info.value.code == "approval-denied"
            assert tool.executed == []
        assert ui.asked == ["Apply?"]
