"""The hook: every call through the runtime becomes one journal row (direct and nested)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from pct_runtime.capabilities.base import ToolError
from pct_runtime.invocation import InvocationHooks
from pct_runtime.journal import Journal
from pct_runtime.journal.summary import RESULT_LIMIT
from pct_runtime.runtime import Runtime
from pct_runtime.serve.mcp.server import PctMCPServer
from tests.journal.helpers import flushed_rows, make_record, make_root


@pytest.fixture
def root(tmp_path: Path) -> Path:
    return make_root(
        tmp_path, toolDiscovery={"enabled": True, "deferred": ["openai_generate_image"]}
    )


async def test_every_tool_over_mcp_is_journaled(root: Path) -> None:
    runtime = Runtime(agent_dir=root / "agent", cwd=root / "work")
    await runtime.start()
    server = PctMCPServer(runtime)
    patch = "*** Begin Patch\n*** Add File: notes.txt\n+hello\n*** End Patch"
    cell = (
        "r = await tools.exec_command(cmd='echo nested')\n"
        "await tools.apply_patch(patch='*** Begin Patch\\n*** Add File: cell.txt\\n+x\\n"
        "*** End Patch')\nprint(r['stdout'])"
    )
    try:
        async with Client(server.server, mode="legacy") as client:
            assert not (await client.call_tool("apply_patch", {"patch": patch})).is_error
            started = await client.call_tool(
                "exec_command", {"cmd": "read line; echo got $line", "yield_time_ms": 200}
            )
            assert started.meta is not None
            sid = started.meta["pct/details"]["session_id"]
            await client.call_tool("write_stdin", {"session_id": sid, "chars": "hunter2\n"})
            ran = await client.call_tool("exec", {"code": cell})
            assert not ran.is_error, ran.content
            await client.call_tool("wait", {"cell_id": "cell-000000000000"})
            bad = await client.call_tool("apply_patch", {"patch": "not a patch"})
            assert bad.is_error
            found = await client.call_tool("find_tools", {"query": "image"})
            assert not found.is_error, found.content
        rows = await flushed_rows(runtime)
    finally:
        await runtime.aclose()
    tools = [(r.tool, r.path, r.outcome) for r in rows]
    assert tools == [
        ("apply_patch", "direct", "ok"),
        ("exec_command", "direct", "ok"),
        ("write_stdin", "direct", "ok"),
        # nested calls finish before their cell
        ("exec_command", "nested", "ok"),
        ("apply_patch", "nested", "ok"),
        ("exec", "direct", "ok"),
        ("wait", "direct", "error"),
        ("apply_patch", "direct", "error"),
        ("find_tools", "direct", "ok"),
    ]
    first, shell, stdin, nested_shell, nested_patch, cell_row, wait_row, bad_row, find = rows
    assert find.summary == '{"query": "image"}'
    assert {r.transport for r in rows} == {"http"}
    assert first.client_name == "mcp"  # the SDK client's default clientInfo
    assert first.summary.startswith("add notes.txt (")
    assert first.undoable
    assert [f.path for f in first.patch_files] == [str(root / "work" / "notes.txt")]
    assert shell.summary == "read line; echo got $line"
    assert "hunter2" not in stdin.summary
    assert stdin.summary.endswith("8 chars")
    assert nested_shell.parent_call_id == cell_row.call_id
    assert nested_patch.parent_call_id == cell_row.call_id
    assert nested_patch.undoable
    assert "nested" in cell_row.result_text
    assert cell_row.summary.startswith("r = await tools.exec_command")
    assert wait_row.error_code is not None
    assert bad_row.error_code is not None
    assert "Begin Patch" in bad_row.result_text
    assert all(r.session_id == first.session_id for r in rows)
    assert all(r.duration_ms >= 0 for r in rows)


async def test_refusals_and_denials_are_journaled(root: Path) -> None:
    def policy(call: Any) -> Any:
        return {"allow": False, "reason": "read-only day"}

    runtime = Runtime(
        agent_dir=root / "agent", cwd=root / "work", hooks=InvocationHooks(policy=policy)
    )
    try:
        session = await runtime.open_session("embedded")
        with pytest.raises(ToolError):
            await session.call("exec_command", {"cmd": "rm -rf /"})
        with pytest.raises(ToolError):
            await session.call("no_such_tool", {"query": "x"})
        rows = await flushed_rows(runtime)
    finally:
        await runtime.aclose()
    assert [(r.tool, r.outcome, r.error_code, r.transport) for r in rows] == [
        ("exec_command", "denied", "policy-denied", "embedded"),
        ("no_such_tool", "error", "unknown-tool", "embedded"),
    ]
    assert "read-only day" in rows[0].result_text


async def test_journal_off_in_config_writes_nothing(root: Path) -> None:
    config = root / "agent" / "extensions" / "pi-codex-toolkit.json"
    data = json.loads(config.read_text())
    data["pct"] = {"journal": {"enabled": False}}
    config.write_text(json.dumps(data))
    async with Runtime(agent_dir=root / "agent", cwd=root / "work") as runtime:
        session = await runtime.open_session("embedded")
        await session.call("exec_command", {"cmd": "true"})
    assert not (root / "agent" / "pct" / "journal.sqlite3").exists()


async def test_console_actions_are_journaled(root: Path) -> None:
    async with Runtime(agent_dir=root / "agent", cwd=root / "work") as runtime:
        session = await runtime.open_session("mcp")
        session.record_action("stop", "shell job 1000")
        await session.close()
        session.record_action("end_session", f"session {session.id}")
        rows = await flushed_rows(runtime)
    assert [(r.tool, r.transport, r.outcome, r.summary) for r in rows] == [
        ("stop", "console", "ok", "shell job 1000"),
        ("end_session", "console", "ok", f"session {session.id}"),
    ]


async def test_a_full_disk_is_reported_once_and_the_patches_go_on(
    root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import errno

    from pct_runtime.journal.blobs import BlobStore
    from pct_runtime.runtime import RUNTIME_EVENTS_CHANNEL

    def full(self: BlobStore, *args: object, **kwargs: object) -> object:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(BlobStore, "link_pending", full)
    events: list[object] = []
    async with Runtime(agent_dir=root / "agent", cwd=root / "work") as runtime:
        runtime.events.subscribe(RUNTIME_EVENTS_CHANNEL, events.append)
        session = await runtime.open_session("embedded")
        for name in ("one", "two"):
            patch = f"*** Begin Patch\n*** Add File: {name}.txt\n+x\n*** End Patch"
            result = await session.call("apply_patch", {"patch": patch})
            assert result.text == f"Applied patch:\n- add {name}.txt"
        rows = await flushed_rows(runtime)
        await asyncio.sleep(0)  # the report hops from the writer thread to the loop
    assert [(r.tool, r.outcome, r.undoable) for r in rows] == [("apply_patch", "ok", False)] * 2
    problems = [e for e in events if isinstance(e, dict) and e.get("type") == "journal-problem"]
    assert len(problems) == 1
    assert "No space left" in str(problems[0]["message"])
    assert (root / "work" / "two.txt").read_text() == "x\n"


async def test_retention_runs_when_a_runtime_starts(root: Path) -> None:
    import time

    config = root / "agent" / "extensions" / "pi-codex-toolkit.json"
    data = json.loads(config.read_text())
    data["pct"] = {"journal": {"maxAgeDays": 7}}
    config.write_text(json.dumps(data))
    with Journal.open(root / "agent") as journal:
        old = make_record(when=time.time() - 8 * 86400)
        recent = make_record(when=time.time() - 6 * 86400)
        journal.record(old)
        journal.record(recent)
    async with Runtime(agent_dir=root / "agent", cwd=root / "work") as runtime:
        assert runtime.journal.settings.max_age_days == 7
        rows = await flushed_rows(runtime)
    assert [r.call_id for r in rows] == [recent.call_id]


async def test_a_shell_jobs_recovery_file_is_recorded(root: Path) -> None:
    async with Runtime(agent_dir=root / "agent", cwd=root / "work") as runtime:
        session = await runtime.open_session("embedded")
        result = await session.call(
            "exec_command", {"cmd": "seq 1 200000", "max_output_tokens": 256}
        )
        recovery = result.details["recovery"]
        assert isinstance(recovery, dict)
        # stdout's, and stderr's too while the job is still capturing when the call answers
        paths = tuple(entry["path"] for entry in recovery.values())
        rows = await flushed_rows(runtime)
    assert recovery["stdout"]["path"] in paths
    assert rows[-1].recovery_paths == paths
    assert len(rows[-1].result_text) <= RESULT_LIMIT  # bounded: the file holds the rest
