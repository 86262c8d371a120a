"""Viewer hooks of the shell: `ShellManager.subscribe/jobs` and `ShellJob.add_output_listener`.

A viewer (the console) sees every job start and a copy of every output byte, without
consuming the preview the model reads.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from pct_runtime.capabilities.shell import ShellManager
from pct_runtime.capabilities.shell.job import ShellJob


async def test_subscribers_see_jobs_and_a_copy_of_their_output(
    manager: ShellManager, tmp_path: Path
) -> None:
    started: list[ShellJob] = []
    seen: list[tuple[str, str]] = []

    def on_job(job: ShellJob) -> None:
        started.append(job)
        job.add_output_listener(lambda label, text: seen.append((label, text)))

    unsubscribe = manager.subscribe(on_job)
    result = await manager.start(
        {"cmd": "echo one; read x; echo got $x; echo oops >&2; sleep 30", "yield_time_ms": 300},
        cwd=tmp_path,
    )
    sid = result.details["session_id"]
    assert [job.id for job in started] == [sid]
    assert [job.id for job in manager.jobs()] == [sid]
    assert "one" in result.details["stdout"]  # the model's preview is intact
    await manager.write({"session_id": sid, "chars": "hi\n", "yield_time_ms": 500})
    for _ in range(100):
        if "oops" in "".join(t for label, t in seen if label == "stderr"):
            break
        await asyncio.sleep(0.02)
    stdout = "".join(t for label, t in seen if label == "stdout")
    assert stdout == "one\ngot hi\n"
    assert "".join(t for label, t in seen if label == "stderr") == "oops\n"
    unsubscribe()
    await manager.start({"cmd": "true"}, cwd=tmp_path)
    assert len(started) == 1  # unsubscribed
    await asyncio.shield(started[0].request_stop())
    assert started[0].settled.is_set()


async def test_a_failing_listener_is_dropped_and_the_job_runs_on(
    manager: ShellManager, tmp_path: Path
) -> None:
    calls: list[str] = []

    def broken(label: str, text: str) -> None:
        calls.append(text)
        raise RuntimeError("viewer bug")

    manager.subscribe(lambda job: job.add_output_listener(broken))
    result = await manager.start({"cmd": "echo a; sleep 0.2; echo b"}, cwd=tmp_path)
    if result.details.get("status") != "completed":
        result = await manager.write(
            {"session_id": result.details["session_id"], "yield_time_ms": 3000}
        )
    assert result.details["stdout"].endswith("b\n")
    assert calls == ["a\n"]
