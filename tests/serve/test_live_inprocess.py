"""Live control against an in-process runtime: snapshots, output, acts, approvals."""

from __future__ import annotations

import asyncio
import json
import os
import socket
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest
from serve_doubles import Approve

from pct_runtime.capabilities.base import ToolError
from pct_runtime.runtime import Runtime
from pct_runtime.serve.client.live_client import (
    ApprovalClosed,
    ApprovalInfo,
    LiveClient,
    LiveError,
    Snapshot,
    Update,
    watch_runtimes,
)
from pct_runtime.serve.client.running import control_token
from pct_runtime.serve.live import connection as live_conn
from pct_runtime.serve.live import worklog as live_output
from pct_runtime.serve.live.control import list_runtimes, request
from pct_runtime.serve.live.protocol import PROTOCOL_VERSION, READ_ONLY_MESSAGE
from pct_runtime.serve.run import LiveControl
from tests.e2e.pct_procs import write_config


@pytest.fixture
async def live(tmp_path: Path) -> AsyncIterator[tuple[Runtime, LiveControl]]:
    agent = tmp_path / "agent"
    agent.mkdir()
    write_config(agent, {"shellSessions": {"enabled": True}})
    runtime = Runtime(agent_dir=agent, cwd=tmp_path, extra_tools=[Approve()])
    await runtime.start()
    control = LiveControl(runtime, "test runtime", kind="pct serve", mcp="stdio")
    await control.start()
    try:
        yield runtime, control
    finally:
        await control.aclose()
        await runtime.aclose()


async def connect(runtime: Runtime, role: str = "console") -> LiveClient:
    (entry,) = list_runtimes(runtime.agent_dir)
    return await LiveClient.connect(entry, control_token(runtime.agent_dir), role=role)  # type: ignore[arg-type]


async def first_update(
    updates: AsyncIterator[Update], check: Callable[[Update], bool], within: float = 10.0
) -> Any:
    async def find() -> Update:
        async for update in updates:
            if check(update):
                return update
        raise AssertionError("the updates ended")

    return await asyncio.wait_for(find(), within)


async def next_of(updates: AsyncIterator[Update], kind: type[Any], within: float = 10.0) -> Any:
    return await first_update(updates, lambda u: isinstance(u, kind), within)


async def snapshot_where(
    updates: AsyncIterator[Update], check: Any, within: float = 10.0
) -> Snapshot:
    snapshot: Snapshot = await first_update(
        updates, lambda u: isinstance(u, Snapshot) and check(u), within
    )
    return snapshot


async def test_registry_entry_says_transport_and_protocol(
    live: tuple[Runtime, LiveControl],
) -> None:
    runtime, _ = live
    (entry,) = list_runtimes(runtime.agent_dir)
    assert (entry.transport, entry.live) == ("stdio", PROTOCOL_VERSION)
    # the one-shot ops still work unchanged on the same socket
    assert (await request(entry, control_token(runtime.agent_dir), "ping")) == {"ok": True}


async def test_old_entries_stay_readable(tmp_path: Path) -> None:
    directory = tmp_path / "pct" / "runtimes"
    directory.mkdir(parents=True)
    with socket.socket() as listening:  # an older runtime's control socket: ours, listening
        listening.bind(("127.0.0.1", 0))
        listening.listen(1)
        control = f"127.0.0.1:{listening.getsockname()[1]}"
        old = {"pid": os.getpid(), "kind": "pct serve", "control": control, "mcp": "http://x/mcp"}
        (directory / "1-old.json").write_text(json.dumps(old))
        (entry,) = list_runtimes(tmp_path)
        assert (entry.transport, entry.live) == ("http", 0)
        with pytest.raises(LiveError, match="does not speak live control"):
            await LiveClient.connect(entry, "token", role="monitor")


async def test_refusals_are_clear(live: tuple[Runtime, LiveControl]) -> None:
    runtime, _ = live
    (entry,) = list_runtimes(runtime.agent_dir)
    with pytest.raises(LiveError, match="unauthorized"):
        await LiveClient.connect(entry, "wrong", role="console")
    host, _, port = entry.control.rpartition(":")
    reader, writer = await asyncio.open_connection(host, int(port))
    token = control_token(runtime.agent_dir)
    writer.write(json.dumps({"token": token, "op": "subscribe", "version": 9}).encode() + b"\n")
    reply = json.loads(await reader.readline())
    writer.close()
    assert reply == {
        "ok": False,
        "error": "unsupported protocol version 9; this runtime speaks 1",
    }


async def test_snapshot_follow_and_stop(live: tuple[Runtime, LiveControl]) -> None:
    runtime, _ = live
    client = await connect(runtime)
    updates = client.updates()
    first = await next_of(updates, Snapshot)
    assert first.runtime.pid == os.getpid()
    assert (first.runtime.kind, first.runtime.transport) == ("serve", "stdio")
    assert first.sessions == ()
    session = await runtime.open_session("mcp")
    cmd = "for i in $(seq 1 400); do echo line-$i; done; sleep 30"
    started = await session.call("exec_command", {"cmd": cmd, "yield_time_ms": 200})
    assert "running" in started.text
    snap = await snapshot_where(updates, lambda s: s.work)
    (work,) = snap.work
    assert [s.id for s in snap.sessions] == [session.id]
    assert (work.kind, work.session_id, work.state) == ("shell", session.id, "running")
    assert work.title == " ".join(cmd.split())
    assert f"Session {session.id}" in snap.status_text

    seen: list[str] = []
    follow = client.follow(work.id)

    async def read_until_sleep() -> None:
        async for chunk in follow:
            assert chunk.offset == sum(len(s) for s in seen)
            seen.append(chunk.data)
            if "line-400\n" in "".join(seen):
                return

    await asyncio.wait_for(read_until_sleep(), 10)
    assert "".join(seen) == "".join(f"line-{i}\n" for i in range(1, 401))
    result = await client.stop(work.id)
    assert result.ok, result.message
    tail = [chunk async for chunk in follow]
    assert tail[-1].ended
    assert "".join(c.data for c in tail) == ""
    done = await snapshot_where(updates, lambda s: s.work and s.work[0].state == "terminated")
    assert done.work[0].id == work.id
    again = await client.stop(work.id)
    assert not again.ok
    assert "already ended" in again.message
    ended = await client.end_session(session.id)
    assert ended.ok, ended.message
    assert runtime.session(session.id) is None
    await client.aclose()


async def test_monitor_acts_are_refused(live: tuple[Runtime, LiveControl]) -> None:
    runtime, _ = live
    session = await runtime.open_session("mcp")
    monitor = await connect(runtime, "monitor")
    await next_of(monitor.updates(), Snapshot)
    for result in (
        await monitor.stop("pct-shell-x"),
        await monitor.end_session(session.id),
        await monitor.answer("approval-x", True),
    ):
        assert (result.ok, result.message) == (False, READ_ONLY_MESSAGE)
    assert runtime.session(session.id) is session
    assert runtime.console_ui is None  # a monitor is never an approval route
    await monitor.aclose()


async def test_console_answers_approvals_first_answer_wins(
    live: tuple[Runtime, LiveControl],
) -> None:
    runtime, _ = live
    first = await connect(runtime)
    second = await connect(runtime)
    a, b = first.updates(), second.updates()
    await next_of(a, Snapshot)
    await next_of(b, Snapshot)
    session = await runtime.open_session("mcp")
    call = asyncio.ensure_future(session.call("approve", {}))
    asked = await next_of(a, ApprovalInfo)
    asked_b = await next_of(b, ApprovalInfo)
    assert asked.request_id == asked_b.request_id
    assert (asked.session_id, asked.title) == (session.id, "Allow the test change?")
    assert (await first.answer(asked.request_id, True)).ok
    assert (await call).text == "approved"
    closed = await next_of(b, ApprovalClosed)
    assert closed == ApprovalClosed(asked.request_id, "answered")
    late = await second.answer(asked.request_id, False)
    assert not late.ok
    assert "no longer pending" in late.message

    call = asyncio.ensure_future(session.call("approve", {}))
    asked = await next_of(b, ApprovalInfo)
    assert (await second.answer(asked.request_id, False)).ok
    assert (await call).text == "denied"
    await first.aclose()
    await second.aclose()


async def test_console_leaving_hands_the_question_on(live: tuple[Runtime, LiveControl]) -> None:
    runtime, _ = live
    client = await connect(runtime)
    updates = client.updates()
    await next_of(updates, Snapshot)
    session = await runtime.open_session("mcp")
    call = asyncio.ensure_future(session.call("approve", {}))
    await next_of(updates, ApprovalInfo)
    await client.aclose()
    with pytest.raises(ToolError) as raised:
        await asyncio.wait_for(call, 5)
    assert raised.value.code == "approval-unavailable"
    assert runtime.console_ui is None


async def test_a_stuck_console_loses_events_and_its_route_never_a_call(
    live: tuple[Runtime, LiveControl], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(live_conn, "STALL_SECONDS", 0.2)
    runtime, control = live
    session = await runtime.open_session("mcp")
    big = "head -c 6000000 /dev/zero | tr '\\0' x; sleep 30"
    started = await session.call("exec_command", {"cmd": big, "yield_time_ms": 500})
    job_id = started.details["session_id"]
    (entry,) = list_runtimes(runtime.agent_dir)
    host, _, port = entry.control.rpartition(":")
    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    sock.connect((host, int(port)))
    reader, writer = await asyncio.open_connection(sock=sock)
    token = control_token(runtime.agent_dir)
    for message in (
        {"token": token, "op": "subscribe", "version": 1, "role": "console"},
        {"type": "follow", "id": 1, "work_id": job_id},
    ):
        writer.write(json.dumps(message).encode() + b"\n")
    await writer.drain()
    assert json.loads(await reader.readline())["ok"] is True
    # From here on the console never reads: its socket fills with output.
    (stuck,) = control.hub.connections
    for _ in range(200):
        if stuck.stalled:
            break
        await asyncio.sleep(0.05)
    assert stuck.stalled
    for i in range(live_conn.MAX_EVENTS + 10):
        runtime.events.publish("pct.runtime", {"type": "test-event", "n": i})
    assert stuck.dropped_events > 0  # dropped, to be replaced by one fresh snapshot
    quick = await asyncio.wait_for(session.call("exec_command", {"cmd": "echo still-fast"}), 10)
    assert "still-fast" in quick.text
    with pytest.raises(ToolError) as raised:  # a console that does not read is no route
        await asyncio.wait_for(session.call("approve", {}), 10)
    assert raised.value.code == "approval-unavailable"
    writer.close()


async def test_a_consoles_embedded_runtime_is_watchable(tmp_path: Path) -> None:
    runtime = Runtime(agent_dir=tmp_path, cwd=tmp_path)
    await runtime.start()
    control = LiveControl(runtime, "pct-tui", kind="pct-tui", mcp="http://127.0.0.1:9/mcp")
    await control.start()
    try:
        client = await connect(runtime, "monitor")
        snap = await next_of(client.updates(), Snapshot)
        assert (snap.runtime.kind, snap.runtime.transport) == ("console", "http")
        assert snap.runtime.control == list_runtimes(tmp_path)[0].control
        await client.aclose()
    finally:
        await control.aclose()
        await runtime.aclose()


async def test_watch_runtimes_reports_starts_and_ends(tmp_path: Path) -> None:
    seen: asyncio.Queue[tuple[str, int]] = asyncio.Queue()

    async def watch() -> None:
        async for change, entry in watch_runtimes(tmp_path, interval=0.05):
            seen.put_nowait((change, entry.pid))

    watcher = asyncio.ensure_future(watch())
    runtime = Runtime(agent_dir=tmp_path, cwd=tmp_path)
    await runtime.start()
    control = LiveControl(runtime, "serve", kind="pct serve", mcp="stdio")
    await control.start()
    try:
        assert await asyncio.wait_for(seen.get(), 10) == ("added", os.getpid())
        await control.aclose()
        assert await asyncio.wait_for(seen.get(), 10) == ("removed", os.getpid())
    finally:
        watcher.cancel()
        await control.aclose()
        await runtime.aclose()


async def test_answers_are_checked_and_unknown_messages_answered(
    live: tuple[Runtime, LiveControl],
) -> None:
    runtime, _ = live
    client = await connect(runtime)
    updates = client.updates()
    await next_of(updates, Snapshot)
    session = await runtime.open_session("mcp")
    call = asyncio.ensure_future(session.call("approve", {}))
    asked = await next_of(updates, ApprovalInfo)
    wrong = await client.answer(asked.request_id, "yes")
    assert (wrong.ok, wrong.message) == (False, "a confirm takes true, false or null (dismiss)")
    assert not call.done()
    unknown = await client._request({"type": "rewind", "work_id": "x"})
    assert (unknown.ok, unknown.message) == (False, "unknown message type 'rewind'")
    assert (await client.answer(asked.request_id, None)).ok  # dismissed: a no
    assert (await call).text == "denied"
    missing = await client.stop("pct-shell-nope")
    assert missing.message == "unknown work pct-shell-nope; take ids from the snapshot"
    await client.aclose()


async def test_a_late_console_gets_the_snapshot_then_the_pending_question(
    live: tuple[Runtime, LiveControl],
) -> None:
    runtime, _ = live
    early = await connect(runtime)
    await next_of(early.updates(), Snapshot)
    session = await runtime.open_session("mcp")
    call = asyncio.ensure_future(session.call("approve", {}))
    asked = await next_of(early.updates(), ApprovalInfo)
    late = await connect(runtime)
    updates = late.updates()
    assert isinstance(await asyncio.wait_for(anext(updates), 10), Snapshot)
    replayed = await next_of(updates, ApprovalInfo)
    assert replayed.request_id == asked.request_id
    assert (await late.answer(replayed.request_id, True)).ok
    assert (await call).text == "approved"
    await early.aclose()
    await late.aclose()


async def test_a_client_known_later_reaches_the_snapshot(live: tuple[Runtime, LiveControl]) -> None:
    runtime, _ = live
    client = await connect(runtime)
    updates = client.updates()
    session = await runtime.open_session("mcp")
    await snapshot_where(updates, lambda s: bool(s.sessions))

    class Port:
        client_name = "late-agent"
        client_version = "2.0"
        available = False

    session.set_fallback_ui(Port())  # type: ignore[arg-type]
    snap = await snapshot_where(updates, lambda s: s.sessions[0].client_name is not None)
    assert (snap.sessions[0].client_name, snap.sessions[0].client_version) == ("late-agent", "2.0")
    await client.aclose()


async def test_a_follower_that_lagged_still_gets_every_character(
    live: tuple[Runtime, LiveControl], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(live_output, "MAX_LOG_CHARS", 64 * 1024)
    runtime, _ = live
    session = await runtime.open_session("mcp")
    started = await session.call(
        "exec_command", {"cmd": "read go; seq 1 300000", "yield_time_ms": 100}
    )
    job_id = started.details["session_id"]
    (entry,) = list_runtimes(runtime.agent_dir)
    host, _, port = entry.control.rpartition(":")
    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    sock.connect((host, int(port)))
    reader, writer = await asyncio.open_connection(sock=sock, limit=1 << 24)
    token = control_token(runtime.agent_dir)
    subscribe = {"token": token, "op": "subscribe", "version": 1, "role": "monitor"}
    writer.write(json.dumps(subscribe).encode() + b"\n")
    await writer.drain()
    assert json.loads(await reader.readline())["ok"] is True
    (connection,) = live[1].hub.connections
    server_socket = connection._writer.transport.get_extra_info("socket")
    server_socket.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 4096)  # no slack anywhere
    writer.write(json.dumps({"type": "follow", "id": 1, "work_id": job_id}).encode() + b"\n")
    await writer.drain()
    # The job starts only once the follow is in place: output captured before a first
    # follow is kept only as its last window (a documented gap), and one 1 MiB pipe read
    # landing before the runtime handled the follow made this test lose its start.
    while (reply := json.loads(await asyncio.wait_for(reader.readline(), 10)))["type"] != "reply":
        pass
    assert (reply["id"], reply["ok"]) == (1, True)
    await session.call("write_stdin", {"session_id": job_id, "chars": "go\n", "yield_time_ms": 100})
    job = next(w for w in live[1].hub.work.values() if w.id == job_id)
    await asyncio.wait_for(job.finished.wait(), 30)  # it all ran while nobody read
    text: list[str] = []
    while True:
        message = json.loads(await asyncio.wait_for(reader.readline(), 30))
        if message.get("type") != "output":
            continue
        assert message["offset"] == sum(map(len, text))
        text.append(message["data"])
        if message["ended"]:
            break
    assert "".join(text) == "".join(f"{i}\n" for i in range(1, 300001))
    writer.close()


async def test_a_subscribe_without_a_role_is_read_only(live: tuple[Runtime, LiveControl]) -> None:
    runtime, _ = live
    (entry,) = list_runtimes(runtime.agent_dir)
    host, _, port = entry.control.rpartition(":")
    reader, writer = await asyncio.open_connection(host, int(port))
    token = control_token(runtime.agent_dir)
    writer.write(json.dumps({"token": token, "op": "subscribe", "version": 1}).encode() + b"\n")
    writer.write(json.dumps({"type": "stop", "id": "a", "work_id": "x"}).encode() + b"\n")
    await writer.drain()
    assert json.loads(await reader.readline())["ok"] is True
    while (message := json.loads(await asyncio.wait_for(reader.readline(), 10)))["type"] != "reply":
        pass
    assert message == {"type": "reply", "id": "a", "ok": False, "message": READ_ONLY_MESSAGE}
    assert runtime.console_ui is None
    writer.close()
