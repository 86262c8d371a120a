"""The real Codex CLI runs a Code Mode cell whose nested apply_patch is approved by a live
console — the issue-20 path as users meet it: `codex exec` spawns `pct serve` on stdio
(and declines every MCP elicitation itself), so only the console can approve.

The fake model holds its first reply until the console has subscribed, as a real model's
thinking time would: a question asked before a console connects is not held for one
(docs/LIVE_PROTOCOL.md, Approvals). What Codex sends back to the model is checked.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import threading
from pathlib import Path
from typing import Any

import pytest
from fake_responses import FakeResponses, Step, assistant_message, function_call
from live_support import CODE_CONFIG, first
from pct_procs import PCT, write_config
from test_codex_agent import CODEX, NAMESPACE, codex_config

from pct_runtime.serve.client.live_client import ApprovalInfo, LiveClient
from pct_runtime.serve.client.running import control_token
from pct_runtime.serve.live.control import list_runtimes

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

NESTED = (
    "*** Begin Patch\n*** Add File: docs/new.md\n+fresh\n*** Delete File: old.txt\n"
    "*** Update File: src/a.py\n*** Move to: src/b.py\n@@\n-x = 1\n+x = 2\n*** End Patch"
)
CELL = f"r = await tools.apply_patch({NESTED!r})\nprint(r['text'])"


async def _registered(agent: Path) -> Any:
    for _ in range(600):
        entries = await asyncio.to_thread(list_runtimes, agent)
        if entries:
            return entries[0]
        await asyncio.sleep(0.05)
    raise AssertionError("codex never started pct serve")


@pytest.mark.parametrize("approve", [True, False])
async def test_codex_cell_patch_approved_in_a_live_console(tmp_path: Path, approve: bool) -> None:
    if CODEX is None or shutil.which("node") is None:
        pytest.skip("Codex CLI (npm @openai/codex) and node are needed")
    agent, work, home = tmp_path / "agent", tmp_path / "work", tmp_path / "codex-home"
    (work / "src").mkdir(parents=True)
    home.mkdir()
    (work / "old.txt").write_text("gone\n")
    (work / "src" / "a.py").write_text("x = 1\n")
    write_config(agent, CODE_CONFIG)
    console_ready = threading.Event()

    def cell(outputs: list[str]) -> dict[str, Any]:
        console_ready.wait(60)  # the model "thinks" until the operator's console is there
        return function_call("call_cell", "exec", {"code": CELL}, NAMESPACE)

    with FakeResponses([cell, assistant_message("Done.")]) as fake:
        (home / "config.toml").write_text(codex_config(fake.port, agent, work), encoding="utf-8")
        env = {
            "PATH": str(Path(PCT).parent) + ":/usr/local/bin:/usr/bin:/bin",
            "HOME": str(tmp_path),
            "CODEX_HOME": str(home),
            "FAKE_KEY": "x",
        }
        if os.environ.get("PYTHONPATH"):
            env["PYTHONPATH"] = os.environ["PYTHONPATH"]
        codex = await asyncio.create_subprocess_exec(
            str(CODEX),
            *("exec", "--skip-git-repo-check", "--ephemeral", "--strict-config", "--json"),
            *("-C", str(work), "Apply the patch from a cell."),
            env=env,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )
        live: LiveClient | None = None
        try:
            entry = await _registered(agent)
            live = await LiveClient.connect(entry, control_token(agent), role="console")
            updates = live.updates()
            console_ready.set()
            asked: ApprovalInfo = await first(updates, lambda u: isinstance(u, ApprovalInfo))
            assert (asked.client or "").startswith("codex-mcp-client")
            assert [(d.operation, d.source) for d in asked.diffs] == [
                ("add", None),
                ("delete", None),
                ("move", "src/a.py"),
            ]
            assert (await live.answer(asked.request_id, approve)).ok
            _, err = await asyncio.wait_for(codex.communicate(), 120)
        finally:
            console_ready.set()
            if live is not None:
                await live.aclose()
            if codex.returncode is None:
                codex.kill()
                await codex.communicate()
        assert codex.returncode == 0, err[-2000:].decode(errors="replace")
        (read,) = fake.tool_outputs()
    print(read)  # with -s: what Codex sent the model
    if approve:
        assert ": completed\nnested calls: 1 completed, 0 failed" in read, read
        assert (
            "Applied patch:\n- add docs/new.md\n- delete old.txt\n- move src/a.py -> src/b.py"
            in read
        )
        assert (work / "src" / "b.py").read_text() == "x = 2\n"
        assert not (work / "old.txt").exists()
    else:
        assert "(ToolError code: approval-denied)" in read, read
        assert "The user declined the nested apply_patch in the pct console." in read
        assert (work / "old.txt").read_text() == "gone\n"
        assert not (work / "docs").exists()


async def test_codex_cell_patch_before_any_console_is_declined_at_once(tmp_path: Path) -> None:
    """No console yet: the question is not held for one. Codex `exec` declines the MCP
    elicitation itself (in ~2 ms), so the model reads approval-denied, that no person was
    asked (not that the user declined), how to get it approved, and nothing changed."""
    if CODEX is None or shutil.which("node") is None:
        pytest.skip("Codex CLI (npm @openai/codex) and node are needed")
    agent, work, home = tmp_path / "agent", tmp_path / "work", tmp_path / "codex-home"
    (work / "src").mkdir(parents=True)
    home.mkdir()
    (work / "old.txt").write_text("gone\n")
    (work / "src" / "a.py").write_text("x = 1\n")
    write_config(agent, CODE_CONFIG)
    steps: list[Step] = [
        function_call("call_cell", "exec", {"code": CELL}, NAMESPACE),
        assistant_message("Done."),
    ]
    with FakeResponses(steps) as fake:
        (home / "config.toml").write_text(codex_config(fake.port, agent, work), encoding="utf-8")
        env = {
            "PATH": str(Path(PCT).parent) + ":/usr/local/bin:/usr/bin:/bin",
            "HOME": str(tmp_path),
            "CODEX_HOME": str(home),
            "FAKE_KEY": "x",
            **({"PYTHONPATH": os.environ["PYTHONPATH"]} if os.environ.get("PYTHONPATH") else {}),
        }
        codex = await asyncio.create_subprocess_exec(
            str(CODEX),
            *("exec", "--skip-git-repo-check", "--ephemeral", "--strict-config", "--json"),
            *("-C", str(work), "Apply the patch from a cell."),
            env=env,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )
        try:
            _, err = await asyncio.wait_for(codex.communicate(), 120)
        finally:
            if codex.returncode is None:
                codex.kill()
                await codex.communicate()
        assert codex.returncode == 0, err[-2000:].decode(errors="replace")
        (read,) = fake.tool_outputs()
    print(read)  # with -s: what Codex sent the model
    assert "(ToolError code: approval-denied)" in read, read
    assert "declined the approval request for the nested apply_patch by itself in" in read
    assert "no person was asked" in read
    assert "user declined" not in read
    assert "open the pct console (pct-tui)" in read
    assert (work / "old.txt").read_text() == "gone\n"
    assert not (work / "docs").exists()


async def test_codex_reads_why_a_yielded_cell_still_runs(tmp_path: Path) -> None:
    """The console holds its answer past the cell's yield: what Codex hands the model says
    the nested apply_patch waits for the console's approval; the model's `wait` then gets
    the result once the operator approves."""
    if CODEX is None or shutil.which("node") is None:
        pytest.skip("Codex CLI (npm @openai/codex) and node are needed")
    agent, work, home = tmp_path / "agent", tmp_path / "work", tmp_path / "codex-home"
    (work / "src").mkdir(parents=True)
    home.mkdir()
    (work / "old.txt").write_text("gone\n")
    (work / "src" / "a.py").write_text("x = 1\n")
    write_config(agent, CODE_CONFIG)
    console_ready, yielded = threading.Event(), threading.Event()

    def cell(outputs: list[str]) -> dict[str, Any]:
        console_ready.wait(60)
        return function_call("call_cell", "exec", {"code": CELL, "yield_time_ms": 500}, NAMESPACE)

    def wait(outputs: list[str]) -> dict[str, Any]:
        cell_id = outputs[-1].split("cell_id ", 1)[1].split(":", 1)[0]
        yielded.set()
        return function_call("call_wait", "wait", {"cell_id": cell_id}, NAMESPACE)

    with FakeResponses([cell, wait, assistant_message("Done.")]) as fake:
        (home / "config.toml").write_text(codex_config(fake.port, agent, work), encoding="utf-8")
        env = {
            "PATH": str(Path(PCT).parent) + ":/usr/local/bin:/usr/bin:/bin",
            "HOME": str(tmp_path),
            "CODEX_HOME": str(home),
            "FAKE_KEY": "x",
            **({"PYTHONPATH": os.environ["PYTHONPATH"]} if os.environ.get("PYTHONPATH") else {}),
        }
        codex = await asyncio.create_subprocess_exec(
            str(CODEX),
            *("exec", "--skip-git-repo-check", "--ephemeral", "--strict-config", "--json"),
            *("-C", str(work), "Apply the patch from a cell."),
            env=env,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )
        live: LiveClient | None = None
        try:
            entry = await _registered(agent)
            live = await LiveClient.connect(entry, control_token(agent), role="console")
            updates = live.updates()
            console_ready.set()
            asked: ApprovalInfo = await first(updates, lambda u: isinstance(u, ApprovalInfo))
            assert await asyncio.to_thread(yielded.wait, 60), "the cell never yielded"
            assert (await live.answer(asked.request_id, True)).ok
            _, err = await asyncio.wait_for(codex.communicate(), 120)
        finally:
            console_ready.set()
            if live is not None:
                await live.aclose()
            if codex.returncode is None:
                codex.kill()
                await codex.communicate()
        assert codex.returncode == 0, err[-2000:].decode(errors="replace")
        running, done = fake.tool_outputs()
    print(running, done, sep="\n---\n")  # with -s: what Codex sent the model
    assert ": running\n" in running, running
    assert (
        "nested apply_patch is waiting for approval (asked the pct console); nothing is "
        "changed until it is answered. Call wait with this cell_id again to get the result."
    ) in running
    assert ": completed\nnested calls: 1 completed, 0 failed" in done, done
    assert "waiting for approval" not in done
    assert (work / "src" / "b.py").read_text() == "x = 2\n"
