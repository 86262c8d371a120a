"""What a refused nested call tells the model: the cause it can act on.

Declared but not admitted, and neither declared nor admitted, name the admission cause
(the refusal a direct call gets, from the runtime's `refusal` callback); admitted but not
declared says how to declare it; a name that is no adapter lists the ones that exist.
Nothing runs in any of these cases.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from code_helpers import FakeAdapter

from pct_runtime.capabilities.base import CallContext
from pct_runtime.capabilities.code import CodeManager

SHELL_OFF = "Shell Sessions are not enabled."


def _refusal(name: str) -> str | None:
    return SHELL_OFF if name in ("exec_command", "write_stdin") else None


def _caught(call: str) -> str:
    """A cell that reports the ToolError `call` raises as `code|message`."""
    return f"try:\n    await {call}\nexcept ToolError as e:\n    text(e.code + '|' + e.message)\n"


async def _error_of(
    manager: CodeManager, ctx: CallContext, call: str, **extra: Any
) -> tuple[str, str]:
    r = await manager.exec({"code": _caught(call), **extra}, ctx)
    assert r.details["status"] == "completed", r.text
    code, _, message = r.details["output"].partition("|")
    return code, message


async def test_undeclared_because_not_admitted_names_the_cause_not_uses(
    make_manager: Callable[..., CodeManager], ctx: CallContext
) -> None:
    """Legacy Code Mode with Shell Sessions off, `uses` omitted (QA F8)."""
    shell = FakeAdapter("exec_command")
    manager = make_manager(
        [shell, FakeAdapter("apply_patch")], admitted=lambda: {"apply_patch"}, refusal=_refusal
    )
    assert await _error_of(manager, ctx, "tools.exec_command(cmd='echo hi')") == (
        "adapter-disabled",
        "tools.exec_command is not admitted in this session (Shell Sessions are not enabled); "
        "nothing ran.",
    )
    assert shell.prepared == []
    assert shell.executed == []


async def test_declared_but_not_admitted_names_the_cause(
    make_manager: Callable[..., CodeManager], ctx: CallContext
) -> None:
    shell = FakeAdapter("write_stdin")
    manager = make_manager([shell], admitted=lambda: (), refusal=_refusal)
    code, message = await _error_of(
        manager, ctx, "tools.write_stdin(session_id='x')", uses=["write_stdin"]
    )
    assert code == "adapter-disabled"
    assert message == (
        "tools.write_stdin is not admitted in this session (Shell Sessions are not enabled); "
        "nothing ran."
    )
    assert shell.prepared == []


async def test_admitted_but_not_declared_says_how_to_declare(
    make_manager: Callable[..., CodeManager], ctx: CallContext
) -> None:
    patch = FakeAdapter("apply_patch")
    manager = make_manager(
        [FakeAdapter("exec_command"), patch],
        admitted=lambda: {"exec_command", "apply_patch"},
        refusal=_refusal,
    )
    code, message = await _error_of(
        manager, ctx, "tools.apply_patch(patch='p')", uses=["exec_command"]
    )
    assert code == "unknown-adapter"
    assert message == (
        "tools.apply_patch is not declared for this cell (declared: exec_command). List it in "
        "exec `uses`, or omit `uses` to declare every adapter admitted when the cell starts, "
        "in a new exec; nothing ran."
    )
    assert patch.prepared == []


async def test_a_name_that_is_no_adapter_lists_the_real_ones(
    make_manager: Callable[..., CodeManager], ctx: CallContext
) -> None:
    manager = make_manager([FakeAdapter("exec_command")], refusal=_refusal)
    assert await _error_of(manager, ctx, "tools.read(path='x')") == (
        "unknown-adapter",
        "tools.read is not a nested tool; only exec_command, write_stdin and apply_patch "
        "exist inside a cell. Nothing ran.",
    )


async def test_without_a_cause_the_refusal_still_points_at_status(
    make_manager: Callable[..., CodeManager], ctx: CallContext
) -> None:
    manager = make_manager([FakeAdapter("apply_patch")], admitted=lambda: ())
    code, message = await _error_of(manager, ctx, "tools.apply_patch(patch='p')")
    assert code == "adapter-disabled"
    assert message.startswith("tools.apply_patch is not admitted in this session (")
    assert "`pct status`" in message
    assert message.endswith("; nothing ran.")
    assert "uses" not in message


async def test_admitted_at_start_then_disabled_says_no_longer(
    make_manager: Callable[..., CodeManager], ctx: CallContext
) -> None:
    admitted = {"exec_command", "write_stdin"}
    gate = asyncio.Event()
    poll = FakeAdapter("write_stdin", gate=gate)
    shell = FakeAdapter("exec_command")
    manager = make_manager([shell, poll], admitted=lambda: set(admitted), refusal=_refusal)
    code = "await tools.write_stdin(session_id='s')\n" + _caught("tools.exec_command(cmd='x')")
    r = await manager.exec({"code": code, "yield_time_ms": 0}, ctx)
    for _ in range(500):
        if poll.executed:
            break
        await asyncio.sleep(0.01)
    assert poll.executed, "the first nested call never started"
    admitted.discard("exec_command")  # Shell Sessions switched off while the cell runs
    gate.set()
    r = await manager.wait({"cell_id": r.details["cell_id"], "yield_time_ms": 10_000}, ctx)
    assert r.details["status"] == "completed", r.text
    assert r.details["output"] == (
        "adapter-disabled|tools.exec_command is no longer admitted in this session (Shell "
        "Sessions are not enabled); nothing ran."
    )
    assert shell.prepared == []
