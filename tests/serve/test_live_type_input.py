"""A console types into a shell job's stdin over live control (a password prompt): the
program reads the bytes, the model's next read says only how many were typed and from
where, and neither the event log nor the journal holds them."""

from __future__ import annotations

from pathlib import Path

from pct_runtime.runtime import Runtime
from pct_runtime.serve.client.live_client import Snapshot
from pct_runtime.serve.live.protocol import MAX_TYPED_BYTES
from pct_runtime.serve.run import LiveControl
from tests.serve.test_live_stop_texts import connect, first, live

__all__ = ["live"]  # the fixture used below

SECRET = "hunter2-secret"


def files_holding(root: Path, needle: bytes) -> list[Path]:
    """Every file under `root` whose bytes contain `needle` (journal, spool, events)."""
    return [p for p in root.rglob("*") if p.is_file() and needle in p.read_bytes()]


async def test_typed_bytes_reach_the_job_and_only_their_count_the_model(
    live: tuple[Runtime, LiveControl], tmp_path: Path
) -> None:
    runtime, _ = live
    client = await connect(runtime)
    updates = client.updates()
    session = await runtime.open_session("mcp")
    cmd = 'read pw; echo "read ${#pw} chars"; sleep 30'
    started = await session.call("exec_command", {"cmd": cmd, "yield_time_ms": 200})
    job_id = started.details["session_id"]
    await first(updates, lambda u: isinstance(u, Snapshot) and bool(u.work))
    typed = await client.type_input(job_id, SECRET + "\n")
    assert (typed.ok, typed.message) == (True, f"typed 15 bytes into shell job {job_id}")
    polled = await session.call(
        "write_stdin", {"session_id": job_id, "chars": "", "yield_time_ms": 2000}
    )
    assert (
        "stdin: the operator typed 15 bytes from a pct console attached over live control "
        "(pct-tui); they are not shown to you"
    ) in polled.text
    assert "read 14 chars" in polled.text
    assert SECRET not in polled.text
    assert polled.details["operator_typed_bytes"] == 15
    again = await session.call("write_stdin", {"session_id": job_id, "chars": ""})
    assert "operator typed" not in again.text  # told once
    await client.stop(job_id)
    await client.aclose()
    await runtime.aclose()
    assert files_holding(runtime.agent_dir, SECRET.encode()) == []
    rows = [
        p for p in runtime.agent_dir.rglob("*") if p.is_file() and b"type_input" in p.read_bytes()
    ]
    assert rows  # the journal has the act itself
    assert any(b"typed 15 bytes" in p.read_bytes() for p in rows)


async def test_typing_is_refused_where_there_is_no_open_stdin(
    live: tuple[Runtime, LiveControl],
) -> None:
    runtime, _ = live
    client = await connect(runtime)
    updates = client.updates()
    session = await runtime.open_session("mcp")
    started = await session.call("exec_command", {"cmd": "sleep 30", "yield_time_ms": 200})
    job_id = started.details["session_id"]
    await first(updates, lambda u: isinstance(u, Snapshot) and bool(u.work))
    too_long = await client.type_input(job_id, "x" * (MAX_TYPED_BYTES + 1))
    assert not too_long.ok
    assert str(MAX_TYPED_BYTES) in too_long.message
    empty = await client.type_input(job_id, "")
    assert not empty.ok
    unknown = await client.type_input("pct-shell-nope", "x")
    assert not unknown.ok
    await session.call("write_stdin", {"session_id": job_id, "chars": "", "closeStdin": True})
    closed = await client.type_input(job_id, "x\n")
    assert (closed.ok, closed.message) == (
        False,
        f"stdin of shell job {job_id} is closed or not open",
    )
    await client.stop(job_id)
    await client.aclose()
