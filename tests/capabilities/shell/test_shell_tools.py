"""The two tools: specs, descriptions, the invocation seam, admission and cancellation.

Hooks and admission rechecks are the runtime's call pipeline's; these tests run the tools
through it with a gate that has no session around it.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Mapping
from pathlib import Path
from typing import Any

import pytest

from pct_runtime.capabilities.base import CallContext, Tool, ToolError, ToolResult
from pct_runtime.capabilities.shell import ShellManager, create_shell_tools
from pct_runtime.invocation import InvocationHooks, PolicyDecision
from pct_runtime.runtime.calls import CallPipeline


class _Gate:
    """A call outside any session: no journal, no events, `admission` as the recheck."""

    def __init__(self, ctx: CallContext, admission: Any) -> None:
        self.path = ctx.path
        self._ctx = ctx
        self._admission = admission

    def trace(self, name: str, args: Any) -> None:
        return None

    def context(self, trace: Any) -> CallContext:
        return self._ctx

    def admit(self, name: str) -> None:
        return None

    def recheck(self, name: str) -> None:
        if self._admission is not None:
            self._admission()

    def running(self, name: str, ctx: CallContext) -> Any:
        return contextlib.nullcontext()

    @contextlib.asynccontextmanager
    async def hold(self, tool: Any, prepared: Any) -> AsyncIterator[None]:
        yield

    def asks(self, name: str, approval: Any) -> bool:
        return False

    def executing(self) -> None:
        return None

    def settled(self) -> None:
        return None


class _Piped:
    """One tool called through the pipeline."""

    def __init__(self, pipeline: CallPipeline, tool: Tool, admission: Any) -> None:
        self.spec = tool.spec
        self._pipeline = pipeline
        self._admission = admission

    async def __call__(self, args: Mapping[str, Any], ctx: CallContext) -> ToolResult:
        gate: Any = _Gate(ctx, self._admission)
        return await self._pipeline.call(self.spec.name, args, gate)


def _tools(manager: ShellManager, hooks: InvocationHooks | None = None, admission: Any = None):
    tools = create_shell_tools(manager)
    pipeline = CallPipeline({tool.spec.name: tool for tool in tools}, hooks=hooks)
    exec_tool, write_tool = (_Piped(pipeline, tool, admission) for tool in tools)
    return exec_tool, write_tool


def test_specs_and_descriptions(manager: ShellManager) -> None:
    exec_tool, write_tool = _tools(manager)
    assert (exec_tool.spec.name, exec_tool.spec.label) == ("exec_command", "Exec Command")
    assert (write_tool.spec.name, write_tool.spec.label) == ("write_stdin", "Write Stdin")
    d = exec_tool.spec.description
    assert "pipes, not a TTY" in d
    assert "never re-run" in d
    assert "write_stdin" in d
    assert "never with wait" in d
    w = write_tool.spec.description
    assert "real newline character (U+000A)" in w
    assert "never the two characters backslash and n" in w
    for spec in (exec_tool.spec, write_tool.spec):
        schema = spec.input_schema
        assert schema["additionalProperties"] is False
        assert "required" not in schema  # aliases: either spelling may be sent
        props = schema["properties"]
        assert props["yield_time_ms"]["maximum"] == 60_000
        assert props["maxOutputBytes"]["minimum"] == 1024
        assert props["max_output_tokens"]["maximum"] == 65_536
    assert {"cmd", "command", "workdir", "cwd"} <= set(exec_tool.spec.input_schema["properties"])
    assert {"session_id", "sessionId", "chars", "input", "closeStdin", "terminate"} <= set(
        write_tool.spec.input_schema["properties"]
    )


async def test_context_hook_env_overlay_and_call_record(
    manager: ShellManager, tmp_path: Path
) -> None:
    calls: list[Mapping[str, Any]] = []

    async def context(call: Mapping[str, Any]) -> Mapping[str, Any]:
        calls.append(dict(call))
        return {"env": {"PCT_HOOK_ID": f"id-{call['tool']}"}}

    exec_tool, write_tool = _tools(manager, InvocationHooks(context=context))
    (tmp_path / "w").mkdir()
    ctx = CallContext(cwd=tmp_path, cell_id=None)
    result = await exec_tool({"cmd": "echo $PCT_HOOK_ID", "workdir": "w"}, ctx)
    assert result.details["stdout"] == "id-exec_command\n"
    assert calls[0] == {"tool": "exec_command", "path": "direct", "cwd": str(tmp_path / "w")}
    running = await exec_tool({"cmd": "cat", "yield_time_ms": 0}, ctx)
    sid = running.details["session_id"]
    await write_tool({"session_id": sid, "closeStdin": True}, ctx)
    assert calls[-1] == {
        "tool": "write_stdin",
        "path": "direct",
        "cwd": str(tmp_path),
        "sessionId": sid,
    }
    nested = CallContext(cwd=tmp_path, path="nested", cell_id="cell-1")
    await exec_tool({"cmd": "true"}, nested)
    assert calls[-1] == {
        "tool": "exec_command",
        "path": "nested",
        "cwd": str(tmp_path),
        "cellId": "cell-1",
    }
    # the call record never carries command text
    assert all("cmd" not in c and "command" not in c for c in calls)


async def test_policy_denial_runs_nothing(manager: ShellManager, tmp_path: Path) -> None:
    marker = tmp_path / "ran"

    def policy(call: Mapping[str, Any]) -> PolicyDecision:
        return PolicyDecision(allow=False, reason="shell is reviewed elsewhere")

    exec_tool, _ = _tools(manager, InvocationHooks(policy=policy))
    with pytest.raises(ToolError) as info:
        await exec_tool({"cmd": f"touch {marker}"}, CallContext(cwd=tmp_path))
    assert info.value.code == "policy-denied"
    assert info.value.message == (
        "exec_command was denied by the Toolkit invocation policy: shell is reviewed "
        "elsewhere. Nothing ran."
    )
    await asyncio.sleep(0.1)
    assert not marker.exists()
    assert manager.session_ids() == []


async def test_write_stdin_policy_denial_sends_nothing(
    manager: ShellManager, tmp_path: Path
) -> None:
    def policy(call: Mapping[str, Any]) -> Mapping[str, Any]:
        return {"allow": call["tool"] != "write_stdin", "reason": "no input"}

    exec_tool, write_tool = _tools(manager, InvocationHooks(policy=policy))
    ctx = CallContext(cwd=tmp_path)
    running = await exec_tool({"cmd": "cat", "yield_time_ms": 0}, ctx)
    sid = running.details["session_id"]
    with pytest.raises(ToolError) as info:
        await write_tool({"session_id": sid, "chars": "x\n"}, ctx)
    assert info.value.code == "policy-denied"
    result = await manager.write({"session_id": sid, "closeStdin": True})
    assert result.details["stdout"] == ""  # nothing was ever written


async def test_invalid_args_rejected_before_hooks(manager: ShellManager, tmp_path: Path) -> None:
    seen: list[Any] = []
    exec_tool, write_tool = _tools(manager, InvocationHooks(context=lambda c: seen.append(c)))
    ctx = CallContext(cwd=tmp_path)
    for args in (
        {"cmd": "ls", "tty": True},
        {"cmd": "a", "command": "b"},
        {"cmd": "ls", "workdir": "nope"},
    ):
        with pytest.raises(ToolError):
            await exec_tool(args, ctx)
    with pytest.raises(ToolError) as info:
        await write_tool({"session_id": 1234}, ctx)
    assert info.value.code == "invalid-session"
    with pytest.raises(ToolError) as info:
        await write_tool({"session_id": "pct-shell-unknown"}, ctx)
    assert info.value.code == "stale-session"  # ownership is checked before the hooks
    assert seen == []


async def test_admission_rechecked_after_awaited_hook(
    manager: ShellManager, tmp_path: Path
) -> None:
    marker = tmp_path / "ran"
    enabled = [True]

    async def context(call: Mapping[str, Any]) -> Mapping[str, Any]:
        enabled[0] = False  # the capability is disabled while the hook runs
        return {}

    def admission() -> None:
        if not enabled[0]:
            raise ToolError("disabled", "Shell Sessions are not enabled.")

    exec_tool, _ = _tools(manager, InvocationHooks(context=context), admission)
    with pytest.raises(ToolError) as info:
        await exec_tool({"cmd": f"touch {marker}"}, CallContext(cwd=tmp_path))
    assert info.value.message == "Shell Sessions are not enabled."
    await asyncio.sleep(0.1)
    assert not marker.exists()


async def test_cancelled_direct_tool_call_stops_job(manager: ShellManager, tmp_path: Path) -> None:
    exec_tool, write_tool = _tools(manager)
    ctx = CallContext(cwd=tmp_path)
    first = await exec_tool({"cmd": "echo up; exec sleep 30", "yield_time_ms": 5000}, ctx)
    sid = first.details["session_id"]
    poll = asyncio.create_task(write_tool({"session_id": sid, "yield_time_ms": 60_000}, ctx))
    await asyncio.sleep(0.2)
    poll.cancel()
    with pytest.raises(asyncio.CancelledError):
        await poll
    result = await write_tool({"session_id": sid, "yield_time_ms": 5000}, ctx)
    assert result.details["status"] == "terminated"
    assert result.details["signal"] == "SIGTERM"
