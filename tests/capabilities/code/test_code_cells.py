"""Cells in real worker processes: state, boundary, results, lifecycle, limits, stops."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from code_helpers import FakeAdapter, process_alive, wait_gone

from pct_runtime.capabilities.base import CallContext, ToolError
from pct_runtime.capabilities.code import CodeManager, create_code_tools
from pct_runtime.capabilities.code import manager as manager_mod
from pct_runtime.capabilities.code.render import RENDER_LIMIT_BYTES


async def run(manager: CodeManager, ctx: CallContext, code: str, **extra: Any) -> Any:
    return await manager.exec({"code": code, **extra}, ctx)


async def test_text_print_and_final_expression(manager: CodeManager, ctx: CallContext) -> None:
    r = await run(manager, ctx, 'text("a")\ntext({"b": [1, 2]})\nprint("x", 2)\n{"k": 1}')
    assert r.text.startswith(f"cell_id {r.details['cell_id']}: completed\n")
    assert '[output]\na{"b":[1,2]}x 2\n[result]\n{"k":1}' in r.text
    assert r.details["result"] == {"k": 1}
    assert "cellId" not in r.details  # one spelling per field
    r = await run(manager, ctx, "x = 3\ntext(x)")
    assert "[result]" not in r.text  # text() returns None: no result
    r = await run(manager, ctx, "pass")
    assert r.text.endswith("(no output)")


async def test_fresh_state_across_cells(manager: CodeManager, ctx: CallContext) -> None:
    await run(manager, ctx, "import json\njson.leak = 1\nsecret = 42\ndef f(): return 1")
    r = await run(
        manager,
        ctx,
        "import json\n[hasattr(json, 'leak'), 'secret' in globals(), 'f' in globals()]",
    )
    assert r.details["result"] == [False, False, False]
    assert len(set(manager.spawned_pids)) == 2


async def test_top_level_await_and_exceptions(manager: CodeManager, ctx: CallContext) -> None:
    r = await run(
        manager,
        ctx,
        "import asyncio\nasync def two():\n    return 2\nawait asyncio.gather(two(), two())",
    )
    assert r.details["result"] == [2, 2]
    r = await run(manager, ctx, "\n\nraise ValueError('boom')")
    assert r.details["status"] == "failed"
    assert 'File "<cell>", line 3' in r.text
    assert "ValueError: boom" in r.text
    r = await run(manager, ctx, "def broken(:\n  pass")
    assert r.details["status"] == "failed"
    assert "SyntaxError" in r.text


@pytest.mark.parametrize(
    ("code", "needle"),
    [
        (
            "import os",
            "import of 'os' is not available in Code Mode cells; allowed modules: base64",
        ),
        ("import subprocess", "allowed modules:"),
        ("from os import path", "import of 'os'"),
        ("__import__('socket')", "import of 'socket'"),
        (
            "import asyncio\nasyncio.create_subprocess_exec",
            "has no attribute 'create_subprocess_exec'",
        ),
        ("open('x', 'w')", "name 'open' is not defined"),
        ("input()", "name 'input' is not defined"),
        ("exit()", "name 'exit' is not defined"),
        ("quit()", "name 'quit' is not defined"),
    ],
)
async def test_import_and_builtin_boundary(
    manager: CodeManager, ctx: CallContext, tmp_path: Path, code: str, needle: str
) -> None:
    r = await run(manager, ctx, code)
    assert r.details["status"] == "failed"
    assert needle in r.text
    assert not (tmp_path / "x").exists()


async def test_allowed_modules_import(manager: CodeManager, ctx: CallContext) -> None:
    code = (
        "import json, re, math, itertools, functools, collections, statistics, string, textwrap\n"
        "import difflib, datetime, decimal, fractions, random, base64, hashlib\n"
        "from collections.abc import Mapping\n"
        "[math.sqrt(16), hashlib.sha256(b'a').hexdigest()[:4], statistics.mean([1, 3])]"
    )
    r = await run(manager, ctx, code)
    assert r.details["result"] == [4.0, "ca97", 2]


async def test_memory_ceiling(manager: CodeManager, ctx: CallContext) -> None:
    r = await run(manager, ctx, "b = bytearray(3 * 1024 ** 3)")
    assert r.details["status"] == "failed"
    assert "MemoryError" in r.text


async def test_yield_then_wait_resumes_and_releases(manager: CodeManager, ctx: CallContext) -> None:
    gate = asyncio.Event()
    fake = FakeAdapter("exec_command", gate=gate, result=lambda a: {"n": a["n"]})
    manager._nested.calls.tools["exec_command"] = fake
    r = await run(
        manager,
        ctx,
        "print('before')\nr = await tools.exec_command(n=5)\nprint('after', r['n'])\nr['n'] * 2",
        yield_time_ms=100,
    )
    cell_id = r.details["cell_id"]
    assert r.text.startswith(
        f"Script running with cell ID {cell_id}. Continue with wait cell_id.\n"
        f"cell_id {cell_id}: running"
    )
    assert "[output]\nbefore" in r.text
    assert "output recovery: capturing" in r.text
    r2 = await manager.wait({"cell_id": cell_id, "yield_time_ms": 50}, ctx)
    assert r2.details["status"] == "running"
    assert "(no new output)" in r2.text
    assert "0 completed, 0 failed, 0 cancelled before dispatch, 1 unsettled" in r2.text
    gate.set()
    r3 = await manager.wait({"cellId": cell_id}, ctx)
    assert r3.details["status"] == "completed"
    assert "[output]\nafter 5\n[result]\n10" in r3.text
    assert "before" not in r3.details["output"]
    assert "nested calls: 1 completed, 0 failed" in r3.text
    with pytest.raises(ToolError) as exc:
        await manager.wait({"cell_id": cell_id}, ctx)
    assert exc.value.code == "stale-cell"
    assert exc.value.message == (
        f"Code Mode cell {cell_id} is unknown, released or expired. Use previously returned "
        "recovery paths; never rerun a program to recover output."
    )


async def test_stop_cpu_bound_cell(manager: CodeManager, ctx: CallContext) -> None:
    r = await run(manager, ctx, "print('spin')\nwhile True:\n    pass", yield_time_ms=200)
    cell_id = r.details["cell_id"]
    pid = manager.spawned_pids[-1]
    assert r.details["status"] == "running"
    assert process_alive(pid)
    r = await manager.wait({"cell_id": cell_id, "terminate": True}, ctx)
    assert r.details["status"] == "terminated"
    assert "[error]\nCell terminated by request." in r.text
    assert await asyncio.to_thread(wait_gone, [pid]) == []


async def test_terminate_stops_the_cells_whole_process_group(
    manager: CodeManager, ctx: CallContext, tmp_path: Path
) -> None:
    # A program can reach `os` through an allowed module's internals and start processes;
    # a stop must take those down with the cell, not leave them to PID 1.
    pidfile = tmp_path / "child.pid"
    code = f"import random\nrandom._os.system('sleep 300 & echo $! > {pidfile}; wait')"
    r = await run(manager, ctx, code, yield_time_ms=0)
    cell_id = r.details["cell_id"]
    for _ in range(200):
        if pidfile.exists() and pidfile.read_text().strip():
            break
        await asyncio.sleep(0.05)
    child = int(pidfile.read_text())
    assert process_alive(child)
    r = await manager.wait({"cell_id": cell_id, "terminate": True}, ctx)
    assert r.details["status"] == "terminated"
    assert await asyncio.to_thread(wait_gone, [child]) == []


async def test_stop_after_completion_reports_program_result(
    manager: CodeManager, ctx: CallContext
) -> None:
    r = await run(manager, ctx, "text('done')\n7", yield_time_ms=0)
    cell_id = r.details["cell_id"]
    for _ in range(200):
        if manager._cells[cell_id].terminal.is_set():
            break
        await asyncio.sleep(0.01)
    r = await manager.wait({"cell_id": cell_id, "terminate": True}, ctx)
    assert r.details["status"] == "completed"
    assert r.details["result"] == 7
    assert "terminated" not in r.text


async def test_program_finishing_after_unconfirmed_stop_reports_its_result(
    manager: CodeManager, ctx: CallContext, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(manager_mod, "STOP_WAIT_SECONDS", 0.05)
    r = await run(
        manager,
        ctx,
        "n = 0\nfor i in range(3_000_000):\n    n += 1\ntext('finished')\nn",
        yield_time_ms=0,
    )
    cell_id = r.details["cell_id"]
    cell = manager._cells[cell_id]
    monkeypatch.setattr(cell.channel, "kill", lambda: None)  # the stop never lands
    r = await manager.wait({"cell_id": cell_id, "terminate": True}, ctx)
    if r.details["status"] == "running":  # the stop was not confirmed: handle kept
        assert "stop requested but not yet confirmed" in r.text
        assert r.details["unknown_outcome"] is True
        r = await manager.wait({"cell_id": cell_id, "yield_time_ms": 30_000}, ctx)
    assert r.details["status"] == "completed"
    assert r.details["result"] == 3_000_000
    assert "not yet confirmed" not in r.text


async def test_a_console_stop_the_program_outran_says_nothing_of_it(
    manager: CodeManager, ctx: CallContext, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(manager_mod, "STOP_WAIT_SECONDS", 0.05)
    r = await run(
        manager,
        ctx,
        "n = 0\nfor i in range(3_000_000):\n    n += 1\nn",
        yield_time_ms=0,
    )
    cell_id = r.details["cell_id"]
    monkeypatch.setattr(manager._cells[cell_id].channel, "kill", lambda: None)  # never lands
    assert await manager.stop_cell(cell_id, by="console") is True
    r = await manager.wait({"cell_id": cell_id, "yield_time_ms": 30_000}, ctx)
    if r.details["status"] == "running":  # the unconfirmed stop is still the console's
        assert "stop requested by the operator from the pct console" in r.text
        r = await manager.wait({"cell_id": cell_id, "yield_time_ms": 30_000}, ctx)
    assert r.details["status"] == "completed"
    assert "operator" not in r.text
    assert "stopped_by" not in r.details


async def test_abort_of_calling_tool_call_stops_cell(
    manager: CodeManager, ctx: CallContext
) -> None:
    task = asyncio.ensure_future(run(manager, ctx, "while True:\n    pass", yield_time_ms=30_000))
    for _ in range(500):
        if manager.spawned_pids and manager._cells:
            break
        await asyncio.sleep(0.01)
    cell = next(iter(manager._cells.values()))
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    await asyncio.wait_for(cell.terminal.wait(), 10)
    assert cell.state == "terminated"
    assert "".join(cell.error_parts) == "Cell terminated because the calling tool call was aborted."
    assert await asyncio.to_thread(wait_gone, [cell.pid]) == []


async def test_close_stops_cells_and_rejects_new_ones(
    manager: CodeManager, ctx: CallContext
) -> None:
    r = await run(manager, ctx, "while True:\n    pass", yield_time_ms=0)
    cell = manager._cells[r.details["cell_id"]]
    await manager.close()
    assert cell.state == "terminated"
    assert "".join(cell.error_parts) == (
        "Cell terminated because Code Mode was disabled or the session ended."
    )
    with pytest.raises(ToolError) as exc:
        await run(manager, ctx, "1")
    assert exc.value.code == "closed"


async def test_close_with_an_unconfirmed_stop_reports_cleanup_incomplete(
    manager: CodeManager, ctx: CallContext, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(manager_mod, "STOP_WAIT_SECONDS", 0.05)
    r = await run(manager, ctx, "while True:\n    pass", yield_time_ms=0)
    cell = manager._cells[r.details["cell_id"]]
    monkeypatch.setattr(cell.channel, "kill", lambda: None)  # the cell's own stop never lands
    with pytest.raises(ToolError) as exc:
        await manager.close()
    assert exc.value.code == "cleanup-incomplete"
    assert exc.value.details == {"cell_ids": [cell.id]}
    # the worker group was taken down with the zygote; a retried close is complete
    await asyncio.wait_for(cell.terminal.wait(), 10)
    await manager.close()
    assert await asyncio.to_thread(wait_gone, [cell.pid]) == []


async def test_running_cell_limit(manager: CodeManager, ctx: CallContext) -> None:
    gate = asyncio.Event()
    manager._nested.calls.tools["exec_command"] = FakeAdapter("exec_command", gate=gate)
    ids = []
    for _ in range(4):
        r = await run(manager, ctx, "await tools.exec_command()", yield_time_ms=0)
        ids.append(r.details["cell_id"])
    with pytest.raises(ToolError) as exc:
        await run(manager, ctx, "1")
    assert exc.value.code == "cell-limit"
    gate.set()
    for cell_id in ids:
        r = await manager.wait({"cell_id": cell_id}, ctx)
        assert r.details["status"] == "completed"
    assert (await run(manager, ctx, "1")).details["result"] == 1


async def test_unread_terminal_results_are_pruned(
    manager: CodeManager, ctx: CallContext, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(manager_mod, "MAX_UNREAD_TERMINAL", 2)
    ids = [(await run(manager, ctx, f"{i}", yield_time_ms=0)).details["cell_id"] for i in range(3)]
    for cell_id in ids:
        cell = manager._cells[cell_id]
        await asyncio.wait_for(cell.terminal.wait(), 10)
    # the oldest terminal result goes first (cells may finish in any order)
    ids.sort(key=lambda cell_id: manager._cells[cell_id].finished_at or 0.0)
    manager._prune()
    with pytest.raises(ToolError) as exc:
        await manager.wait({"cell_id": ids[0]}, ctx)
    assert exc.value.code == "stale-cell"
    newest = await manager.wait({"cell_id": ids[2]}, ctx)
    assert newest.details["status"] == "completed"
    # expiry after five minutes
    cell = manager._cells[ids[1]]
    assert cell.finished_at is not None
    cell.finished_at -= manager_mod.UNREAD_TTL_SECONDS + 1
    manager._prune()
    assert ids[1] not in manager._cells


async def test_output_budget_truncates_and_recovery_keeps_everything(
    manager: CodeManager, ctx: CallContext
) -> None:
    r = await run(manager, ctx, "for i in range(2000):\n    print('line', i)", maxOutputBytes=1024)
    assert len(r.details["output"].encode()) <= 1024
    assert "[output truncated:" in r.text
    path = r.details["recovery"]["output"]["path"]
    data = await asyncio.to_thread(Path(path).read_text)
    assert data.count("\n") == 2000
    assert "line 1999" in data
    assert f"output recovery: complete — {path}" in r.text


async def test_result_and_error_bounds(manager: CodeManager, ctx: CallContext) -> None:
    r = await run(manager, ctx, "'x' * 100_000")
    assert "[result clipped:" in r.text
    assert r.details["clipping"]["result"] is True
    saved = await asyncio.to_thread(Path(r.details["recovery"]["result"]["path"]).read_text)
    assert saved == '"' + "x" * 100_000 + '"'
    r = await run(manager, ctx, "raise ValueError('e' * 20_000)")
    assert r.details["clipping"]["error"] is True
    assert len(r.details["error"].encode()) <= 4096
    r = await run(manager, ctx, "print('y' * 300_000)", maxOutputBytes=262_144)
    assert len(r.text.encode()) <= RENDER_LIMIT_BYTES


async def test_uses_snapshot_is_a_ceiling_and_shrinking_applies_at_dispatch(
    make_manager: Callable[..., CodeManager], ctx: CallContext
) -> None:
    admitted = {"exec_command"}
    gate = asyncio.Event()
    shell = FakeAdapter("exec_command", gate=gate)
    patch = FakeAdapter("apply_patch")
    manager = make_manager([shell, patch], admitted=lambda: set(admitted))
    # omitted uses = every adapter admitted at cell start
    r = await run(
        manager,
        ctx,
        "await tools.exec_command(a=1)\nawait tools['apply_patch']({'patch': 'p'})",
        yield_time_ms=0,
    )
    cell_id = r.details["cell_id"]
    admitted.add("apply_patch")  # growing later does not widen the running cell
    gate.set()
    r = await manager.wait({"cell_id": cell_id}, ctx)
    assert r.details["status"] == "failed"
    assert "(ToolError code: unknown-adapter)" in r.text
    assert "declared: exec_command" in r.text
    assert patch.executed == []
    # explicit [] declares none
    r = await run(manager, ctx, "await tools.exec_command()", uses=[])
    assert "declared: none" in r.text
    # shrinking is enforced when the nested call is dispatched
    gate.clear()
    r = await run(
        manager,
        ctx,
        "await tools.exec_command(x=1)\nawait tools.exec_command(x=2)",
        uses=["exec_command"],
        yield_time_ms=0,
    )
    cell_id = r.details["cell_id"]
    for _ in range(500):
        if shell.executed and len(shell.executed) >= 2:
            break
        await asyncio.sleep(0.01)
    admitted.discard("exec_command")
    gate.set()
    r = await manager.wait({"cell_id": cell_id}, ctx)
    assert "(ToolError code: adapter-disabled)" in r.text
    assert "nested calls: 1 completed, 1 failed" in r.text


async def test_invalid_nested_arguments_and_call_shapes(
    make_manager: Callable[..., CodeManager], ctx: CallContext
) -> None:
    fake = FakeAdapter("exec_command")
    manager = make_manager([fake])
    code = (
        "errs = []\n"
        "try:\n    await tools.exec_command(bad=1)\n"
        "except ToolError as e:\n    errs.append(e.code)\n"
        "try:\n    tools.exec_command('ls')\nexcept TypeError as e:\n    errs.append('type')\n"
        "r = await tools.exec_command({'cmd': 'ls'})\n"
        "errs, r['echo']"
    )
    r = await run(manager, ctx, code)
    assert r.details["result"] == [["invalid-arguments", "type"], {"cmd": "ls"}]


async def test_bridge_bounds(make_manager: Callable[..., CodeManager], ctx: CallContext) -> None:
    gate = asyncio.Event()
    fake = FakeAdapter("exec_command", gate=gate)
    manager = make_manager([fake])
    code = (
        "calls = [tools.exec_command(i=i) for i in range(17)]\n"
        "try:\n    await calls[16]\nexcept ToolError as e:\n    text(e.code)\n"
        "try:\n    await tools.exec_command(blob='z' * 300_000)\n"
        "except ToolError as e:\n    text(' ' + e.code)\n"
    )
    r = await run(manager, ctx, code, yield_time_ms=2000)
    assert "bridge-overload bridge-overload" in r.details["output"]
    gate.set()
    r = await manager.wait({"cell_id": r.details["cell_id"]}, ctx)
    assert r.details["status"] == "completed"
    assert "16 completed, 2 failed" in r.text


async def test_progress_records_are_bounded_and_carry_no_arguments(
    make_manager: Callable[..., CodeManager], tmp_path: Path
) -> None:
    records: list[dict[str, Any]] = []
    manager = make_manager([FakeAdapter("exec_command")])
    ctx = CallContext(cwd=tmp_path, progress=records.append)
    await manager.exec(
        {"code": "for i in range(40):\n    await tools.exec_command(cmd='secret-command')"}, ctx
    )
    assert len(records) == manager_mod.PROGRESS_PER_CALL
    for record in records:
        assert "secret" not in repr(record)
        assert set(record) <= {"kind", "phase", "adapter", "cell_id", "session_id", "ok", "code"}
        assert record["adapter"] == "exec_command"


async def test_tools_wrap_the_manager(manager: CodeManager, ctx: CallContext) -> None:
    exec_tool, wait_tool = create_code_tools(manager)
    assert exec_tool.spec.name == "exec"
    assert wait_tool.spec.name == "wait"
    assert "not a sandbox" in exec_tool.spec.description
    assert exec_tool.spec.description.startswith(
        "Run Python code to orchestrate/compose tool calls"
    )
    assert wait_tool.spec.description.startswith(
        "Waits on a yielded `exec` cell and returns new output or completion.\n"
        "- Use `wait` only after `exec` returns `Script running with cell ID ...`."
    )
    r = await exec_tool({"code": "1 + 1"}, ctx)
    assert r.details["result"] == 2


async def test_worker_start_failure_is_cell_start_failed(
    manager: CodeManager, ctx: CallContext, monkeypatch: pytest.MonkeyPatch
) -> None:
    from pct_runtime.capabilities.code.bridge import WorkerStartError

    async def broken() -> Any:
        raise WorkerStartError("no processes left")

    monkeypatch.setattr(manager._zygote, "acquire", broken)
    with pytest.raises(ToolError) as exc:
        await run(manager, ctx, "1")
    assert exc.value.code == "cell-start-failed"
    assert manager._cells == {}


async def test_worker_dying_mid_program_fails_the_cell(
    manager: CodeManager, ctx: CallContext
) -> None:
    import os
    import signal

    r = await run(manager, ctx, "print('started')\nwhile True:\n    pass", yield_time_ms=100)
    os.kill(manager.spawned_pids[-1], signal.SIGKILL)  # not a stop: something else killed it
    r = await manager.wait({"cell_id": r.details["cell_id"]}, ctx)
    assert r.details["status"] == "failed"
    assert "the worker process exited before the program finished" in r.text


async def test_oversized_reply_returns_control_fields_only(
    make_manager: Callable[..., CodeManager], ctx: CallContext
) -> None:
    big = FakeAdapter(
        "exec_command", result=lambda a: {"session_id": "pct-shell-1", "stdout": "é" * 200_000}
    )
    manager = make_manager([big])
    code = (
        "try:\n    await tools.exec_command(cmd='x')\n"
        "except ToolError as e:\n    err = [e.code, e.details]\n"
        "err"
    )
    r = await run(manager, ctx, code)
    assert r.details["result"] == [
        "bridge-overload",
        {"session_id": "pct-shell-1"},
    ]
    assert "0 completed, 1 failed, 0 cancelled before dispatch, 0 unsettled" in r.text


async def test_viewers_see_cells_without_consuming_the_preview(
    manager: CodeManager, ctx: CallContext
) -> None:
    views: list[Any] = []
    unsubscribe = manager.subscribe(views.append)
    r = await run(manager, ctx, "print('a')\nwhile True:\n    pass", yield_time_ms=0)
    (view,) = views
    assert view.id == r.details["cell_id"]
    assert [v.id for v in manager.cells()] == [view.id]
    r = await manager.wait({"cell_id": view.id, "yield_time_ms": 300}, ctx)
    # text printed before a CPU-bound stretch still arrives (flushed by the worker's thread)
    assert r.details["output"] == "a\n"
    assert view.state == "running"
    assert set(view.recovery()) == {"output", "result", "error"}
    assert await view.stop() is True
    assert view.state == "terminated"
    r = await manager.wait({"cell_id": view.id}, ctx)
    assert r.details["status"] == "terminated"
    unsubscribe()
    await run(manager, ctx, "1")
    assert len(views) == 1


async def test_output_listener_gets_a_copy(manager: CodeManager, ctx: CallContext) -> None:
    chunks: list[str] = []
    manager.subscribe(lambda view: view.add_output_listener(chunks.append))
    r = await run(manager, ctx, "print('one')\nprint('two')")
    assert "".join(chunks) == "one\ntwo\n"
    assert r.details["output"] == "one\ntwo\n"


async def test_outstanding_argument_bytes_are_bounded_per_cell(
    make_manager: Callable[..., CodeManager], ctx: CallContext
) -> None:
    gate = asyncio.Event()
    manager = make_manager([FakeAdapter("exec_command", gate=gate)])
    code = (
        "first = tools.exec_command(blob='a' * 200_000)\n"
        "try:\n    await tools.exec_command(blob='b' * 100_000)\n"
        "except ToolError as e:\n    text(e.code)\n"
        "await first\n"
        "await tools.exec_command(blob='c' * 100_000)\n"  # released once the first settled
    )
    r = await run(manager, ctx, code, yield_time_ms=1000)
    assert r.details["output"] == "bridge-overload"
    gate.set()
    r = await manager.wait({"cell_id": r.details["cell_id"]}, ctx)
    assert r.details["status"] == "completed", r.text
    assert "2 completed, 1 failed" in r.text


async def test_one_terminal_observer_wins_and_queued_observers_are_stale(
    make_manager: Callable[..., CodeManager], ctx: CallContext
) -> None:
    gate = asyncio.Event()
    manager = make_manager([FakeAdapter("exec_command", gate=gate)])
    r = await run(manager, ctx, "await tools.exec_command()\n5", yield_time_ms=0)
    cell_id = r.details["cell_id"]
    first = asyncio.ensure_future(manager.wait({"cell_id": cell_id, "yield_time_ms": 10_000}, ctx))
    second = asyncio.ensure_future(manager.wait({"cell_id": cell_id, "yield_time_ms": 10_000}, ctx))
    await asyncio.sleep(0.05)
    gate.set()
    results = await asyncio.gather(first, second, return_exceptions=True)
    assert results[0].details["result"] == 5
    assert isinstance(results[1], ToolError)
    assert results[1].code == "stale-cell"


async def test_pragma_keeps_line_numbers_and_sets_limits(
    make_manager: Callable[..., CodeManager], ctx: CallContext
) -> None:
    # The cell waits on a gated nested call, so it is still running at a 0 ms yield
    # however fast or loaded the machine is.
    gate = asyncio.Event()
    manager = make_manager([FakeAdapter("exec_command", gate=gate)])
    code = (
        '// @exec: {"yield_time_ms": 0, "max_output_tokens": 256}\n'
        "await tools.exec_command()\n"
        'raise KeyError("k")'
    )
    r = await run(manager, ctx, code)
    assert r.details["status"] == "running"  # yield_time_ms 0 from the pragma
    gate.set()
    r = await manager.wait({"cell_id": r.details["cell_id"]}, ctx)
    assert 'File "<cell>", line 3' in r.text
    spawned = len(manager.spawned_pids)
    with pytest.raises(ToolError) as exc:
        await run(manager, ctx, '# @exec: {"nope": 1}\n1')
    assert exc.value.code == "invalid-code"
    assert len(manager.spawned_pids) == spawned  # rejected before a worker was taken
