# ruff: noqa: ASYNC240  (blocking file checks are fine in tests)
"""ShellManager against real processes: completion, interaction, stop, limits, stdin rules."""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path

import pytest

from pct_runtime.capabilities.base import ToolError
from pct_runtime.capabilities.shell import ShellConfig, ShellManager
from pct_runtime.output import OutputOwner

PY = sys.executable


async def _poll_until_done(manager: ShellManager, sid: str, rounds: int = 50) -> dict:
    """Poll to the terminal result; `stdout`/`stderr` accumulate every poll's new output."""
    out = err = ""
    for _ in range(rounds):
        result = await manager.write({"session_id": sid, "yield_time_ms": 2000})
        out += result.details["stdout"]
        err += result.details["stderr"]
        if result.details["status"] != "running":
            return {**result.details, "stdout": out, "stderr": err}
    raise AssertionError("job did not finish")


async def test_quick_command_completes_in_one_call_without_files(
    manager: ShellManager, tmp_path: Path, temp_root: Path
) -> None:
    result = await manager.start({"cmd": "echo hi; echo err >&2; exit 3"}, cwd=tmp_path)
    assert result.text.splitlines()[:2] == [
        f"session_id {result.details['session_id']}: completed",
        "exit_code: 3",
    ]
    assert "[stdout]\nhi\n[stderr]\nerr" in result.text
    d = result.details
    assert d["session_id"].startswith("pct-shell-")
    assert d["exit_code"] == 3
    assert "sessionId" not in d  # one spelling per field
    assert "exitCode" not in d
    assert (d["stdout"], d["stderr"]) == ("hi\n", "err\n")
    assert d["recovery"] == {}
    assert list(temp_root.iterdir()) == []
    # terminal-once: the handle is released
    with pytest.raises(ToolError) as info:
        await manager.write({"session_id": d["session_id"]})
    assert info.value.code == "stale-session"
    assert "never rerun" in info.value.message


async def test_no_output_and_workdir(manager: ShellManager, tmp_path: Path) -> None:
    (tmp_path / "sub").mkdir()
    result = await manager.start({"cmd": "true"}, cwd=tmp_path)
    assert result.text.endswith("(no output)")
    result = await manager.start({"cmd": "pwd", "workdir": "sub"}, cwd=tmp_path)
    assert result.details["stdout"] == f"{tmp_path / 'sub'}\n"


async def test_interactive_line_program_through_write_stdin(
    manager: ShellManager, tmp_path: Path
) -> None:
    program = 'while IFS= read -r line; do echo "got:$line"; done; echo bye'
    first = await manager.start({"cmd": program, "yield_time_ms": 200}, cwd=tmp_path)
    sid = first.details["session_id"]
    assert first.details["status"] == "running"
    assert "job still running; continue with write_stdin, not wait" in first.text
    assert first.text.endswith("(no output)")
    for word in ("alpha", "béta"):
        result = await manager.write({"session_id": sid, "chars": f"{word}\n"})
        assert result.details["stdout"] == f"got:{word}\n"
        assert result.details["input_delivery"] == "written"
        assert f"stdin: written ({len((word + chr(10)).encode())} UTF-8 bytes)" in result.text
    # no implicit newline: a partial line is not submitted
    result = await manager.write({"sessionId": sid, "input": "gam", "yieldTimeMs": 100})
    assert result.text.endswith("(no new output)")
    result = await manager.write({"session_id": sid, "chars": "ma\n", "closeStdin": True})
    assert "stdin: written (3 UTF-8 bytes); closed" in result.text
    text = result.details["stdout"]
    if result.details["status"] == "running":
        text += (await _poll_until_done(manager, sid))["stdout"]
    assert text == "got:gamma\nbye\n"


async def test_closed_stdin_rejects_input_and_repeated_eof_is_harmless(
    manager: ShellManager, tmp_path: Path
) -> None:
    first = await manager.start({"cmd": "cat; sleep 30", "yield_time_ms": 0}, cwd=tmp_path)
    sid = first.details["session_id"]
    await manager.write({"session_id": sid, "closeStdin": True, "yield_time_ms": 0})
    again = await manager.write({"session_id": sid, "closeStdin": True, "yield_time_ms": 0})
    assert again.details["status"] == "running"
    with pytest.raises(ToolError) as info:
        await manager.write({"session_id": sid, "chars": "x"})
    assert info.value.code == "stdin-closed"
    stop = await manager.write({"session_id": sid, "terminate": True})
    assert stop.details["status"] == "terminated"
    assert stop.details["signal"] == "SIGTERM"
    assert "exit_code: SIGTERM" in stop.text


async def test_yield_returns_on_new_output_not_deadline(
    manager: ShellManager, tmp_path: Path
) -> None:
    # With a 60 s yield, the call must come back as soon as `first` appears.
    result = await manager.start(
        {"cmd": "echo first; exec sleep 30", "yield_time_ms": 60_000}, cwd=tmp_path
    )
    assert result.details["status"] == "running"
    assert result.details["stdout"] == "first\n"
    sid = result.details["session_id"]
    poll = await manager.write({"session_id": sid, "yield_time_ms": 0})
    assert poll.text.splitlines()[-1] == "(no new output)"
    stop = await manager.write({"session_id": sid, "terminate": True})
    assert stop.details["status"] == "terminated"


async def test_process_ignoring_sigterm_is_killed(manager: ShellManager, tmp_path: Path) -> None:
    cmd = "trap '' TERM; echo ready; while :; do sleep 1; done"
    result = await manager.start({"cmd": cmd, "yield_time_ms": 5000}, cwd=tmp_path)
    assert result.details["stdout"] == "ready\n"
    stop = await manager.write({"session_id": result.details["session_id"], "terminate": True})
    assert stop.details["status"] == "terminated"
    assert stop.details["signal"] == "SIGKILL"
    assert stop.details["unknown_outcome"] is False
    assert manager.unsettled_count == 0


async def test_grandchild_holding_pipes_keeps_job_running(
    manager: ShellManager, tmp_path: Path
) -> None:
    cmd = "(sleep 1; echo late) & echo early"
    result = await manager.start({"cmd": cmd, "yield_time_ms": 300}, cwd=tmp_path)
    assert result.details["status"] == "running"  # leader is gone, the pipe is not
    assert result.details["stdout"] == "early\n"
    done = await _poll_until_done(manager, result.details["session_id"])
    assert done["stdout"] == "late\n"
    assert done["exit_code"] == 0


async def test_group_member_with_redirected_output_keeps_job_running(
    manager: ShellManager, tmp_path: Path
) -> None:
    marker = tmp_path / "done"
    cmd = f"(sleep 1; touch {marker}) >/dev/null 2>&1 & echo started"
    result = await manager.start({"cmd": cmd, "yield_time_ms": 300}, cwd=tmp_path)
    assert result.details["status"] == "running"  # leader exited, both streams at EOF
    done = await _poll_until_done(manager, result.details["session_id"])
    assert done["status"] == "completed"
    assert marker.exists()  # the job only settled once the group member was gone


async def test_output_split_inside_multibyte_characters(
    manager: ShellManager, tmp_path: Path
) -> None:
    cmd = (
        "printf '\\342'; sleep 0.2; printf '\\202\\254 \\360\\237'; sleep 0.2; printf '\\230\\200'"
    )
    result = await manager.start({"cmd": cmd, "yield_time_ms": 5000}, cwd=tmp_path)
    text = result.details["stdout"]
    if result.details["status"] == "running":
        while True:
            more = await manager.write(
                {"session_id": result.details["session_id"], "yield_time_ms": 5000}
            )
            text += more.details["stdout"]
            if more.details["status"] != "running":
                break
    assert text == "€ 😀"


async def test_invalid_utf8_is_replaced(manager: ShellManager, tmp_path: Path) -> None:
    result = await manager.start({"cmd": "printf 'a\\377b'"}, cwd=tmp_path)
    assert result.details["stdout"] == "a\ufffdb"


async def test_budget_cuts_on_code_point_and_drains_stdout_first(
    manager: ShellManager, tmp_path: Path
) -> None:
    cmd = f"{PY} -c \"import sys; sys.stdout.write('€'*1000); sys.stderr.write('E'*10)\""
    result = await manager.start({"cmd": cmd, "maxOutputBytes": 1024}, cwd=tmp_path)
    d = result.details
    assert d["status"] == "completed"
    assert d["stdout"] == "€" * 341  # 1023 bytes: the 342nd euro would split
    assert d["stderr"] == "E"  # stdout drains first; stderr gets the 1 byte left
    assert d["truncated"] == {
        "stdout": {"dropped_bytes": 0, "omitted_bytes": 3000 - 1023},
        "stderr": {"dropped_bytes": 0, "omitted_bytes": 9},
    }
    rec = d["recovery"]["stdout"]
    assert rec["state"] == "complete"
    assert Path(rec["path"]).read_text("utf-8") == "€" * 1000
    assert Path(d["recovery"]["stderr"]["path"]).read_text() == "E" * 10
    assert "[stdout: 1977 UTF-8 bytes not shown — 1977 over this call's output budget" in (
        result.text
    )


async def test_yield_publishes_recovery_paths_for_both_streams(
    manager: ShellManager, tmp_path: Path, owner: OutputOwner
) -> None:
    result = await manager.start(
        {"cmd": "echo x; exec sleep 30", "yield_time_ms": 2000}, cwd=tmp_path
    )
    rec = result.details["recovery"]
    assert set(rec) == {"stdout", "stderr"}
    for label in ("stdout", "stderr"):
        assert rec[label]["state"] == "capturing"
        path = Path(rec[label]["path"])
        assert path.exists()
        assert oct(path.stat().st_mode & 0o777) == "0o600"
        assert f"{label} recovery: capturing — {path}" in result.text
    await manager.write({"session_id": result.details["session_id"], "terminate": True})
    assert Path(rec["stdout"]["path"]).read_text() == "x\n"
    await manager.close()
    await owner.close()
    assert not Path(rec["stdout"]["path"]).exists()


async def test_recovery_lines_name_a_file_once_until_its_state_changes(
    manager: ShellManager, tmp_path: Path
) -> None:
    """Each poll of a running `cat` would otherwise repeat both paths; details keep them."""
    first = await manager.start({"cmd": "cat", "yield_time_ms": 200}, cwd=tmp_path)
    sid = first.details["session_id"]
    assert "stdout recovery: capturing — " in first.text
    assert "stderr recovery: capturing — " in first.text
    typed = await manager.write({"session_id": sid, "chars": "hello\n", "yield_time_ms": 2000})
    assert typed.details["stdout"] == "hello\n"
    assert "recovery" not in typed.text
    path = first.details["recovery"]["stdout"]["path"]
    assert typed.details["recovery"]["stdout"]["path"] == path
    assert typed.details["recovery"]["stdout"]["bytes"] == 6
    assert len(typed.text) <= 200, typed.text
    last = await manager.write({"session_id": sid, "closeStdin": True, "yield_time_ms": 2000})
    if last.details["status"] == "running":
        assert "recovery" not in last.text
        last = await manager.write({"session_id": sid, "yield_time_ms": 2000})
    assert last.details["status"] == "completed"
    # capturing -> complete is a change of state: the file is named again
    assert f"stdout recovery: complete — {path}" in last.text


async def test_spill_beyond_preview_keeps_everything_recoverable(
    manager: ShellManager, tmp_path: Path
) -> None:
    size = 3 * 256 * 1024 + 17
    cmd = f"head -c {size} /dev/zero | tr '\\0' 'q'"
    result = await manager.start({"cmd": cmd}, cwd=tmp_path)
    d = result.details
    while d["status"] == "running":
        d = (await manager.write({"session_id": d["session_id"]})).details
    rec = d["recovery"]["stdout"]
    assert rec["state"] == "complete"
    assert rec["bytes"] == rec["captured_bytes"] == size
    assert os.path.getsize(rec["path"]) == size


async def test_sixteen_jobs_and_the_seventeenth_refused(
    manager: ShellManager, tmp_path: Path
) -> None:
    results = await asyncio.gather(
        *(
            manager.start({"cmd": "exec sleep 30", "yield_time_ms": 0}, cwd=tmp_path)
            for _ in range(16)
        )
    )
    assert all(r.details["status"] == "running" for r in results)
    assert len({r.details["session_id"] for r in results}) == 16
    with pytest.raises(ToolError) as info:
        await manager.start({"cmd": "echo never"}, cwd=tmp_path)
    assert info.value.code == "session-limit"
    assert manager.unsettled_count == 16
    await manager.write({"session_id": results[0].details["session_id"], "terminate": True})
    ok = await manager.start({"cmd": "echo now"}, cwd=tmp_path)
    assert ok.details["stdout"] == "now\n"
    await manager.close()
    assert manager.unsettled_count == 0
    with pytest.raises(ToolError) as info:
        await manager.start({"cmd": "true"}, cwd=tmp_path)
    assert info.value.code == "manager-closed"


async def test_cancelling_a_direct_call_stops_its_job(
    manager: ShellManager, tmp_path: Path
) -> None:
    marker = tmp_path / "survived"
    task = asyncio.create_task(
        manager.start({"cmd": f"sleep 1; touch {marker}", "yield_time_ms": 60_000}, cwd=tmp_path)
    )
    await asyncio.sleep(0.3)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    [sid] = manager.session_ids()
    for _ in range(100):
        if manager.unsettled_count == 0:
            break
        await asyncio.sleep(0.05)
    assert manager.unsettled_count == 0
    await asyncio.sleep(1.2)
    assert not marker.exists()
    assert sid in manager.session_ids()  # the terminal result is still unread


async def test_cancelling_a_nested_poll_leaves_the_job_running(
    manager: ShellManager, tmp_path: Path
) -> None:
    first = await manager.start(
        {"cmd": "sleep 0.5; echo finished", "yield_time_ms": 0}, cwd=tmp_path, path="nested"
    )
    sid = first.details["session_id"]
    poll = asyncio.create_task(
        manager.write({"session_id": sid, "yield_time_ms": 60_000}, path="nested")
    )
    await asyncio.sleep(0.1)
    poll.cancel()
    with pytest.raises(asyncio.CancelledError):
        await poll
    done = await _poll_until_done(manager, sid)
    assert done["stdout"] == "finished\n"
    assert done["status"] == "completed"


async def test_one_terminal_observer_wins(manager: ShellManager, tmp_path: Path) -> None:
    first = await manager.start({"cmd": "sleep 0.3; echo end", "yield_time_ms": 0}, cwd=tmp_path)
    sid = first.details["session_id"]
    results = await asyncio.gather(
        manager.write({"session_id": sid, "yield_time_ms": 5000}),
        manager.write({"session_id": sid, "yield_time_ms": 5000}),
        return_exceptions=True,
    )
    outcomes = sorted(r.code if isinstance(r, ToolError) else r.details["status"] for r in results)
    assert outcomes == ["completed", "stale-session"]


async def test_stdin_overload_and_unknown_delivery(manager: ShellManager, tmp_path: Path) -> None:
    # `sleep` never reads stdin: a write bigger than the pipe stays pending after its yield.
    first = await manager.start({"cmd": "exec sleep 30", "yield_time_ms": 0}, cwd=tmp_path)
    sid = first.details["session_id"]
    big = "x" * 200_000
    result = await asyncio.wait_for(
        manager.write({"session_id": sid, "chars": big, "yield_time_ms": 300}), 10
    )
    assert result.details["status"] == "running"
    assert result.details["input_delivery"] == "pending"
    written = result.details["input_written_bytes"]
    assert 0 < written < 200_000
    assert f"stdin: pending ({written} of 200000 UTF-8 bytes reached the pipe so far" in (
        result.text
    )
    assert "do not resend" in result.text
    # the pending bytes still count against the admission budget
    with pytest.raises(ToolError) as info:
        await manager.write({"session_id": sid, "chars": "y" * 70_000}, path="nested")
    assert info.value.code == "stdin-overload"
    assert "Nothing was sent" in info.value.message
    # polls are not queued behind the pending write
    poll = await asyncio.wait_for(manager.write({"session_id": sid, "yield_time_ms": 0}), 5)
    assert "stdin (earlier call): pending" in poll.text
    stop = await asyncio.wait_for(manager.write({"session_id": sid, "terminate": True}), 10)
    assert stop.details["status"] == "terminated"
    assert "stdin (earlier call): delivery unknown" in stop.text


async def test_write_larger_than_the_stdin_limit_can_never_fit(
    manager: ShellManager, tmp_path: Path
) -> None:
    first = await manager.start({"cmd": "cat", "yield_time_ms": 0}, cwd=tmp_path)
    sid = first.details["session_id"]
    with pytest.raises(ToolError) as info:
        await manager.write({"session_id": sid, "chars": "z" * 262_145})
    assert info.value.code == "stdin-overload"
    assert "262145 UTF-8 bytes" in info.value.message
    assert "can never be sent in one call" in info.value.message
    assert "Nothing was sent" in info.value.message
    done = await manager.write({"session_id": sid, "closeStdin": True, "yield_time_ms": 5000})
    assert done.details["stdout"] == ""  # nothing of the refused input reached the program


async def test_pending_write_is_delivered_in_the_background(
    manager: ShellManager, tmp_path: Path
) -> None:
    # The program reads stdin only after a pause: the call answers first, delivery follows.
    first = await manager.start(
        {"cmd": "sleep 1; wc -c", "yield_time_ms": 0}, cwd=tmp_path, path="nested"
    )
    sid = first.details["session_id"]
    result = await manager.write(
        {"session_id": sid, "chars": "a" * 100_000, "closeStdin": True, "yield_time_ms": 0}
    )
    assert result.details["input_delivery"] == "pending"
    assert "then closes stdin" in result.text
    done = await _poll_until_done(manager, sid)
    assert done["stdout"].strip() == "100000"
    assert done["status"] == "completed"


async def test_sixteen_outstanding_stdin_calls(tmp_path: Path, owner: OutputOwner) -> None:
    manager = ShellManager(owner, kill_grace=0.5, confirm_window=1.0, stdin_max_calls=2)
    try:
        first = await manager.start({"cmd": "exec sleep 30", "yield_time_ms": 0}, cwd=tmp_path)
        sid = first.details["session_id"]
        for _ in range(2):  # each answers at its yield; its bytes stay pending
            r = await manager.write({"session_id": sid, "chars": "z" * 70_000, "yield_time_ms": 0})
            assert r.details["input_delivery"] == "pending"
        with pytest.raises(ToolError) as info:
            await manager.write({"session_id": sid, "chars": "a"}, path="nested")
        assert info.value.code == "stdin-overload"
        assert "2 stdin calls" in info.value.message
        await manager.write({"session_id": sid, "terminate": True})
        # once the writes settle (here: failed at the stop) the budget is free again
        job_calls = [j.stdin_pending_calls for j in manager.jobs()]
        assert job_calls in ([], [0])
    finally:
        await manager.close()


async def test_broken_pipe_reports_unknown_delivery(manager: ShellManager, tmp_path: Path) -> None:
    # The shell closes its stdin, then keeps running: writes fail with EPIPE.
    first = await manager.start({"cmd": "exec 0<&-; sleep 30", "yield_time_ms": 200}, cwd=tmp_path)
    sid = first.details["session_id"]
    result = await manager.write({"session_id": sid, "chars": "hello\n", "yield_time_ms": 0})
    assert result.details["input_delivery"] == "unknown"
    assert "stdin: delivery unknown (0 of 6 UTF-8 bytes" in result.text
    assert "Do not resend" in result.text
    with pytest.raises(ToolError) as info:
        await manager.write({"session_id": sid, "chars": "again\n"})
    assert info.value.code == "stdin-closed"
    await manager.write({"session_id": sid, "terminate": True})


async def test_stdin_transport_shell(tmp_path: Path, owner: OutputOwner) -> None:
    manager = ShellManager(owner, lambda: ShellConfig("/bin/sh", (), stdin_transport=True))
    try:
        result = await manager.start({"cmd": "echo via-stdin", "yield_time_ms": 5000}, cwd=tmp_path)
        assert result.details["stdout"] == "via-stdin\n"
        assert "stdin transport" in result.text
        running = await manager.start({"cmd": "sleep 30", "yield_time_ms": 0}, cwd=tmp_path)
        sid = running.details["session_id"]
        with pytest.raises(ToolError) as info:
            await manager.write({"session_id": sid, "chars": "x\n"})
        assert info.value.code == "stdin-transport"
        poll = await manager.write({"session_id": sid, "yield_time_ms": 0})
        assert poll.details["status"] == "running"
    finally:
        await manager.close()


async def test_shell_unavailable_and_spawn_failed(tmp_path: Path, owner: OutputOwner) -> None:
    def none() -> ShellConfig:
        raise RuntimeError("no shell here")

    manager = ShellManager(owner, none)
    with pytest.raises(ToolError) as info:
        await manager.start({"cmd": "true"}, cwd=tmp_path)
    assert info.value.code == "shell-unavailable"
    manager = ShellManager(owner, lambda: ShellConfig(str(tmp_path / "no-such-shell")))
    with pytest.raises(ToolError) as info:
        await manager.start({"cmd": "true"}, cwd=tmp_path)
    assert info.value.code == "spawn-failed"
    assert manager.unsettled_count == 0  # no phantom slot
    assert manager.session_ids() == []


async def test_unknown_session_is_stale(manager: ShellManager) -> None:
    with pytest.raises(ToolError) as info:
        await manager.write({"session_id": "pct-shell-nope"})
    assert info.value.code == "stale-session"
    assert info.value.message == (
        "Shell session pct-shell-nope is unknown, released or expired. Use previously returned "
        "recovery paths; never rerun a command to recover output."
    )


async def test_unread_terminal_handles_pruned_but_files_kept(
    tmp_path: Path, owner: OutputOwner
) -> None:
    now = [0.0]
    manager = ShellManager(owner, clock=lambda: now[0], max_unread=2, handle_ttl=300)
    try:
        ids = []
        paths = []
        for i in range(3):
            # `cat` waits for stdin, so this first result is certainly `running`
            r = await manager.start({"cmd": f"echo {i}; cat", "yield_time_ms": 0}, cwd=tmp_path)
            ids.append(r.details["session_id"])
            paths.append(r.details["recovery"]["stdout"]["path"])
        for sid in ids:
            now[0] += 1
            job = manager._jobs[sid]
            await job.write_input(b"", close=True)  # EOF without observing the result
            await asyncio.wait_for(job.settled.wait(), 10)
        assert manager.has_session(ids[0]) is False  # beyond 2 unread: the oldest goes
        assert manager.has_session(ids[1])
        assert manager.has_session(ids[2])
        now[0] += 301
        assert not manager.has_session(ids[2])  # five minutes (here 300 s) unread
        for p in paths:
            assert Path(p).exists()  # recovery files outlive handle pruning
        assert Path(paths[0]).read_text() == "0\n"
    finally:
        await manager.close()


async def test_unknown_outcome_keeps_handle_and_close_reports_incomplete(
    tmp_path: Path, owner: OutputOwner, monkeypatch: pytest.MonkeyPatch
) -> None:
    import pct_runtime.capabilities.shell.job as job_module

    manager = ShellManager(owner, kill_grace=0.2, confirm_window=0.3)
    first = await manager.start({"cmd": "exec sleep 30", "yield_time_ms": 0}, cwd=tmp_path)
    sid = first.details["session_id"]
    monkeypatch.setattr(job_module, "group_alive", lambda pgid: True)  # confirmation never comes
    stop = await manager.write({"session_id": sid, "terminate": True})
    assert stop.details["status"] == "terminated"
    assert stop.details["unknown_outcome"] is True
    assert "outcome unknown" in stop.text
    assert manager.has_session(sid)
    with pytest.raises(ToolError) as info:
        await manager.close()
    assert info.value.code == "cleanup-incomplete"
    assert sid in info.value.message
    monkeypatch.undo()
    await manager.close()  # retry succeeds once the group is confirmed gone
    assert manager.session_ids() == []


async def test_env_is_inherited_plus_overlay(manager: ShellManager, tmp_path: Path) -> None:
    os.environ["PCT_SHELL_INHERITED"] = "base"
    try:
        fresh = ShellManager(OutputOwner(root=tmp_path))
        r = await fresh.start(
            {"cmd": "echo $PCT_SHELL_INHERITED-$PCT_OVERLAY"},
            cwd=tmp_path,
            env_overlay={"PCT_OVERLAY": "over"},
        )
        assert r.details["stdout"] == "base-over\n"
        r = await fresh.start({"cmd": 'echo "[$PCT_OVERLAY]"'}, cwd=tmp_path)
        assert r.details["stdout"] == "[]\n"  # overlays never leak into the next call
        await fresh.close()
    finally:
        del os.environ["PCT_SHELL_INHERITED"]


async def test_terminate_after_natural_completion_reports_completed(
    manager: ShellManager, tmp_path: Path
) -> None:
    first = await manager.start({"cmd": "cat", "yield_time_ms": 0}, cwd=tmp_path, path="nested")
    sid = first.details["session_id"]
    job = manager._jobs[sid]
    await job.write_input(b"done\n", close=True)
    await asyncio.wait_for(job.settled.wait(), 10)
    result = await manager.write({"session_id": sid, "terminate": True})
    assert result.details["status"] == "completed"
    assert result.details["exit_code"] == 0
    assert result.details["stdout"] == "done\n"


async def test_close_ends_waiting_polls_with_manager_closed(
    manager: ShellManager, tmp_path: Path
) -> None:
    first = await manager.start({"cmd": "exec sleep 30", "yield_time_ms": 0}, cwd=tmp_path)
    poll = asyncio.create_task(
        manager.write({"session_id": first.details["session_id"], "yield_time_ms": 60_000})
    )
    await asyncio.sleep(0.1)
    await manager.close()
    with pytest.raises(ToolError) as info:
        await poll
    assert info.value.code == "manager-closed"


async def test_cancelled_terminate_call_still_stops_and_releases_reservation(
    manager: ShellManager, tmp_path: Path
) -> None:
    cmd = "trap '' TERM; while :; do sleep 0.1; done"
    first = await manager.start({"cmd": cmd, "yield_time_ms": 200}, cwd=tmp_path)
    sid = first.details["session_id"]
    stop = asyncio.create_task(manager.write({"session_id": sid, "terminate": True}))
    await asyncio.sleep(0.1)
    stop.cancel()
    with pytest.raises(asyncio.CancelledError):
        await stop
    result = await manager.write({"session_id": sid, "yield_time_ms": 10_000})
    assert result.details["status"] == "terminated"
    assert result.details["signal"] == "SIGKILL"


async def test_viewers_see_jobs_and_output_without_consuming_the_preview(
    manager: ShellManager, tmp_path: Path
) -> None:
    seen: list[tuple[str, str]] = []
    jobs = []

    def on_job(job: object) -> None:
        jobs.append(job)
        job.add_output_listener(lambda label, text: seen.append((label, text)))  # type: ignore[attr-defined]

    def broken(job: object) -> None:
        raise RuntimeError("viewer bug")

    unsubscribe = manager.subscribe(on_job)
    manager.subscribe(broken)  # a failing viewer is dropped, the call is unaffected
    result = await manager.start({"cmd": "echo out; echo err >&2"}, cwd=tmp_path)
    assert result.details["stdout"] == "out\n"  # the model still gets everything
    assert result.details["stderr"] == "err\n"
    assert len(jobs) == 1
    assert sorted(seen) == [("stderr", "err\n"), ("stdout", "out\n")]
    unsubscribe()
    await manager.start({"cmd": "true"}, cwd=tmp_path)
    assert len(jobs) == 1


async def test_stop_reaches_background_group_members_after_the_leader_exited(
    manager: ShellManager, tmp_path: Path
) -> None:
    cmd = "sleep 30 >/dev/null 2>&1 & echo started"
    result = await manager.start({"cmd": cmd, "yield_time_ms": 1000}, cwd=tmp_path)
    assert result.details["status"] == "running"
    assert result.details["stdout"] == "started\n"
    await asyncio.sleep(1.5)  # the idle group probe has backed off by now
    stop = await manager.write({"session_id": result.details["session_id"], "terminate": True})
    assert stop.details["status"] == "terminated"
    assert stop.details["unknown_outcome"] is False
    assert stop.details["exit_code"] == 0  # the leader itself had exited normally
