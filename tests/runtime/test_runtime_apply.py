# ruff: noqa: ASYNC240  (blocking file checks are fine in tests)
"""Applying a projection before it commits: start fence, cleanups, Apply error, retry.

Real `ShellManager` / `CodeManager` through a real `Runtime`. A cleanup failure is made
real with the shell tests' technique (the process group never confirms gone) or with a
Code Mode manager whose close raises `cleanup-incomplete`.
"""

from __future__ import annotations

import asyncio
import functools
import json
import re
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from pct_runtime.capabilities.base import ToolError
from pct_runtime.capabilities.code.descriptor import CODE
from pct_runtime.capabilities.computer_use.descriptor import LIFECYCLE
from pct_runtime.capabilities.shell.descriptor import SHELL
from pct_runtime.decide.sync import APPLY_ERROR_TEXT
from pct_runtime.host.events import EXECUTION_DIAGNOSTICS_CHANNEL
from pct_runtime.host.ui import Question
from pct_runtime.runtime import Runtime, RuntimeSession

SHELL_AND_CODE = {"shellSessions": {"enabled": True}, "codeMode": {"enabled": True}}


def write_config(agent: Path, data: dict[str, Any]) -> None:
    (agent / "extensions" / "pi-codex-toolkit.json").write_text(json.dumps(data), encoding="utf-8")


def pid_running(pid: int) -> bool:
    """True while `pid` exists and is not a zombie."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            stat = fh.read()
    except OSError:
        return False
    return stat[stat.rfind(b")") + 2 :].split()[0] not in (b"Z", b"X")


@pytest.fixture
def agent(tmp_path: Path) -> Path:
    directory = tmp_path / "agent"
    (directory / "extensions").mkdir(parents=True)
    write_config(directory, SHELL_AND_CODE)
    return directory


@pytest.fixture
async def runtime(agent: Path, tmp_path: Path) -> AsyncIterator[Runtime]:
    work = tmp_path / "work"
    work.mkdir()
    async with Runtime(agent_dir=agent, cwd=work, model="openai/gpt-5") as rt:
        yield rt


@pytest.fixture
def diagnostics(runtime: Runtime) -> list[dict[str, Any]]:
    records: list[dict[str, Any]] = []
    runtime.events.subscribe(EXECUTION_DIAGNOSTICS_CHANNEL, records.append)
    return records


KEYS: dict[str, Any] = {"shell": SHELL, "code": CODE}


def built(session: RuntimeSession, key: str) -> Any:
    """The session's shared manager for `key` (it must have been built)."""
    manager = session.slots.peek(KEYS[key])
    assert manager is not None
    return manager


async def start_sleeper(session: RuntimeSession) -> tuple[str, int, dict[str, Any]]:
    """A running job that printed a line: its id, process id and recovery records."""
    result = await session.call(
        "exec_command", {"cmd": "echo started; exec sleep 60", "yield_time_ms": 1000}
    )
    assert result.details["status"] == "running", result.text
    sid = result.details["session_id"]
    job = next(j for j in built(session, "shell").jobs() if j.id == sid)
    return sid, job.pgid, result.details["recovery"]


async def test_disabling_shell_stops_the_job_and_keeps_its_recovery_file_until_session_end(
    runtime: Runtime, agent: Path
) -> None:
    session = await runtime.open_session("mcp")
    manager = built(session, "shell")
    _sid, pid, recovery = await start_sleeper(session)
    path = Path(recovery["stdout"]["path"])
    assert path.read_text() == "started\n"

    write_config(agent, {"codeMode": {"enabled": True}})
    assert (await runtime.reload()).ok
    assert not pid_running(pid)  # stopped and reaped at the reload, not at session end
    assert manager.jobs() == []
    assert "exec_command" not in session.projection.visible
    assert path.read_text() == "started\n"  # recovery files live until the session ends
    with pytest.raises(ToolError) as info:
        await session.call("exec_command", {"cmd": "echo no"})
    assert info.value.message == "Shell Sessions are not enabled."
    assert session.runtime.projection_sync.apply_error(session.id) is None

    write_config(agent, SHELL_AND_CODE)
    assert (await runtime.reload()).ok
    assert session.slots.peek(SHELL) is manager  # reopened: viewers stay subscribed
    again = await session.call("exec_command", {"cmd": "echo again"})
    assert again.details["stdout"] == "again\n"

    await session.close()
    assert not path.exists()


async def test_model_change_and_unchanged_reload_clean_nothing(
    runtime: Runtime, diagnostics: list[dict[str, Any]]
) -> None:
    session = await runtime.open_session("mcp")
    sid, pid, recovery = await start_sleeper(session)
    cell = await session.call(
        "exec",
        {
            "code": "print('cell up')\nawait tools.exec_command(cmd='exec sleep 60', "
            "yield_time_ms=30000)",
            "yield_time_ms": 300,
        },
    )
    assert "Script running with cell ID" in cell.text, cell.text
    cell_id = cell.details["cell_id"]
    code = built(session, "code")
    shell = built(session, "shell")

    await session.set_model("openai-codex/gpt-5.1-codex-max")
    assert (await runtime.reload()).ok
    assert pid_running(pid)
    assert built(session, "code") is code
    assert not code.closed
    assert built(session, "shell") is shell
    assert not shell.closed
    assert Path(recovery["stdout"]["path"]).exists()
    polled = await session.call("write_stdin", {"session_id": sid, "yield_time_ms": 250})
    assert polled.details["status"] == "running"
    waited = await session.call("wait", {"cell_id": cell_id, "yield_time_ms": 250})
    assert "Script running" in waited.text
    # session start, model change, reload: each committed, none with a pending cleanup
    assert [r["cleanupPending"] for r in diagnostics] == [False, False, False]
    stopped = await session.call("wait", {"cell_id": cell_id, "terminate": True})
    assert stopped.text.startswith(f"cell_id {cell_id}: terminated")
    await session.close()
    assert not pid_running(pid)


async def test_disabling_code_closes_cells_but_a_shell_the_cell_started_keeps_running(
    runtime: Runtime, agent: Path
) -> None:
    session = await runtime.open_session("mcp")
    program = (
        "r = await tools.exec_command(cmd='echo from-cell; exec sleep 60', yield_time_ms=500)\n"
        "print(r['session_id'])\n"
        "await tools.write_stdin(session_id=r['session_id'], yield_time_ms=30000)"
    )
    cell = await session.call("exec", {"code": program, "yield_time_ms": 1500})
    assert "Script running with cell ID" in cell.text, cell.text
    found = re.search(r"pct-shell-[0-9a-f]+", cell.text)
    assert found is not None, cell.text
    sid = found.group(0)
    old_code = built(session, "code")
    assert old_code.worker_pids()

    write_config(agent, {"shellSessions": {"enabled": True}})
    assert (await runtime.reload()).ok
    assert old_code.closed
    assert old_code.worker_pids() == []
    assert session.slots.peek(CODE) is None  # dropped: a re-enable binds a fresh one
    with pytest.raises(ToolError) as info:
        await session.call("exec", {"code": "print(1)"})
    assert info.value.message == "Code Mode is not enabled."
    polled = await session.call("write_stdin", {"session_id": sid, "yield_time_ms": 250})
    assert polled.details["status"] == "running"  # the yielded shell is Shell Sessions' own

    write_config(agent, SHELL_AND_CODE)
    assert (await runtime.reload()).ok
    fresh = await session.call("exec", {"code": "print(6 * 7)"})
    assert fresh.text.rstrip().endswith("42")
    assert session.slots.peek(CODE) is not old_code
    stop = await session.call("write_stdin", {"session_id": sid, "terminate": True})
    assert stop.details["status"] == "terminated"
    await session.close()


async def test_unconfirmed_shell_cleanup_rejects_keeps_the_projection_and_retries(
    runtime: Runtime,
    agent: Path,
    diagnostics: list[dict[str, Any]],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import pct_runtime.capabilities.shell as shell_package
    import pct_runtime.capabilities.shell.job as job_module

    monkeypatch.setattr(
        shell_package,
        "ShellManager",
        functools.partial(shell_package.ShellManager, kill_grace=0.2, confirm_window=0.3),
    )
    session = await runtime.open_session("mcp")
    sid, pid, _ = await start_sleeper(session)
    committed = session.plan
    diagnostics.clear()

    with monkeypatch.context() as stuck:
        stuck.setattr(job_module, "group_alive", lambda pgid: True)  # never confirmed gone
        write_config(agent, {})
        assert (await runtime.reload()).ok  # the file was read fine; applying it failed
        assert session.plan is committed  # the previous projection stays in force
        assert "exec_command" in session.projection.visible
        assert f"Apply error: {APPLY_ERROR_TEXT}" in session.status_text()
        assert f"Apply error: {APPLY_ERROR_TEXT}" in runtime.live_status_text("pct")
        assert len(diagnostics) == 1
        assert diagnostics[0]["cleanupPending"] is True
        assert "exec_command" in diagnostics[0]["visibleNames"]
        with pytest.raises(ToolError) as info:  # the start fence refuses new work
            await session.call("exec_command", {"cmd": "echo no"})
        assert info.value.message == "Shell Sessions are not enabled."
        polled = await session.call("write_stdin", {"session_id": sid, "yield_time_ms": 250})
        assert polled.details["session_id"] == sid  # retained work stays reachable

    assert (await runtime.reload()).ok  # the retry confirms the stop
    assert "Apply error" not in session.status_text()
    assert "exec_command" not in session.projection.visible
    assert diagnostics[-1]["cleanupPending"] is False
    assert "exec_command" not in diagnostics[-1]["visibleNames"]
    assert not pid_running(pid)


class StuckCode:
    """A Code Mode manager whose first `close` cannot confirm its cell stopped."""

    def __init__(self) -> None:
        self.closed = False
        self.close_calls = 0
        self.failures = 1
        self.waits: list[str] = []

    def cells(self) -> list[str]:
        return ["cell-stuck"]

    def worker_pids(self) -> list[int]:
        return []

    async def close(self) -> None:
        self.closed = True
        self.close_calls += 1
        if self.close_calls <= self.failures:
            raise ToolError(
                "cleanup-incomplete",
                "Code Mode could not confirm that 1 cell(s) stopped (cell-stuck).",
                {"cell_ids": ["cell-stuck"]},
            )

    async def exec(self, args: Any, ctx: Any) -> Any:
        raise AssertionError("the fence must refuse exec before the manager")

    async def wait(self, args: Any, ctx: Any) -> Any:
        from pct_runtime.capabilities.base import ToolResult

        self.waits.append(args["cell_id"])
        return ToolResult(text="Script running with cell ID cell-stuck.")


async def test_unconfirmed_code_cleanup_is_reported_fenced_and_retried_by_a_model_change(
    runtime: Runtime, agent: Path, diagnostics: list[dict[str, Any]]
) -> None:
    session = await runtime.open_session("mcp")
    real: Any = session.slots.drop(CODE)
    await real.close()
    stuck = StuckCode()
    session.slots.get(CODE, lambda: stuck)

    write_config(agent, {"shellSessions": {"enabled": True}})
    assert (await runtime.reload()).ok
    assert stuck.close_calls == 1
    status = session.status_text()
    assert f"Apply error: {APPLY_ERROR_TEXT}" in status
    assert "exec" in session.projection.visible
    assert "wait" in session.projection.visible
    assert diagnostics[-1]["cleanupPending"] is True
    with pytest.raises(ToolError) as info:
        await session.call("exec", {"code": "print(1)"})
    assert info.value.message == "Code Mode is not enabled."
    waited = await session.call("wait", {"cell_id": "cell-stuck"})
    assert stuck.waits == ["cell-stuck"]  # retained cells keep wait/terminate
    assert "cell-stuck" in waited.text

    # Re-enabling Code does not bypass the pending cleanup: the retry comes first.
    stuck.failures = 2
    write_config(agent, SHELL_AND_CODE)
    assert (await runtime.reload()).ok
    assert stuck.close_calls == 2
    assert "Apply error" in session.status_text()

    await session.set_model("openai-codex/gpt-5.1-codex-max")  # the next trigger retries
    assert stuck.close_calls == 3
    assert "Apply error" not in session.status_text()
    assert diagnostics[-1]["cleanupPending"] is False
    assert session.slots.peek(CODE) is None
    fresh = await session.call("exec", {"code": "print('rebound')"})  # a fresh manager
    assert "rebound" in fresh.text
    assert session.slots.peek(CODE) is not stuck
    await session.close()


class GatedCode(StuckCode):
    """A Code Mode manager whose close waits for the test to release it."""

    def __init__(self) -> None:
        super().__init__()
        self.failures = 0
        self.entered = asyncio.Event()
        self.release = asyncio.Event()

    async def close(self) -> None:
        self.entered.set()
        await self.release.wait()
        await super().close()


async def test_a_superseded_sync_publishes_nothing(
    runtime: Runtime, agent: Path, diagnostics: list[dict[str, Any]]
) -> None:
    session = await runtime.open_session("mcp")
    real: Any = session.slots.drop(CODE)
    await real.close()
    gated = GatedCode()
    session.slots.get(CODE, lambda: gated)
    diagnostics.clear()

    write_config(agent, {"shellSessions": {"enabled": True}})
    runtime._take(await asyncio.to_thread(runtime.store.read))  # adopt it without syncing
    older = asyncio.create_task(session.sync())
    try:
        await asyncio.wait_for(gated.entered.wait(), 5)
        newer = asyncio.create_task(session.sync())  # supersedes the one in its cleanup
        await asyncio.sleep(0)
    finally:
        gated.release.set()  # never leave the session's own close waiting on the gate
    assert await older is False
    assert await newer is True
    assert len(diagnostics) == 1  # only the newest sync published
    assert "exec" not in diagnostics[0]["visibleNames"]
    assert gated.close_calls == 1
    await session.close()


class FakeClient:
    def __init__(self, mode: str) -> None:
        self.mode = mode
        self.is_closed = False

    async def close(self) -> None:
        self.is_closed = True


class FakeProbe:
    def inspect(self) -> Any:
        from pct_runtime.capabilities.computer_use.eligibility import RuntimeInspection

        return RuntimeInspection(runtime=object(), reason=None)  # type: ignore[arg-type]

    async def probe(self) -> None:
        return None


class DialogUI:
    available = True

    async def confirm(self, question: Question) -> bool:
        return True

    async def select(self, question: Question) -> str | None:
        return None

    def notify(self, message: str, level: str = "info") -> None:
        pass


async def test_computer_use_client_resets_on_mode_change_and_disable_not_on_reload(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import pct_runtime.capabilities.computer_use.eligibility as eligibility
    from pct_runtime.capabilities.computer_use.lifecycle import ComputerUseLifecycle

    monkeypatch.setattr(
        eligibility, "inspect_runtime", lambda: eligibility.RuntimeInspection(None, None)
    )
    agent = tmp_path / "agent"
    (agent / "extensions").mkdir(parents=True)
    write_config(agent, {"computerUse": {"enabled": True}})
    async with Runtime(
        agent_dir=agent, cwd=tmp_path, model="openai/gpt-5", platform="darwin"
    ) as rt:
        session = await rt.open_session("mcp", ui=DialogUI())
        assert "computer_use_list_apps" in session.projection.visible
        lifecycle = ComputerUseLifecycle(
            probe=FakeProbe(),
            client_factory=lambda runtime, mode: FakeClient(mode),  # type: ignore[arg-type,return-value]
        )
        session.slots.get(LIFECYCLE, lambda: lifecycle)
        first = lifecycle.client()
        assert isinstance(first, FakeClient)

        assert (await rt.reload()).ok  # unchanged: the client and its approvals stay
        assert lifecycle.current_client is first
        assert not first.is_closed

        write_config(agent, {"computerUse": {"enabled": True, "approvalMode": "always"}})
        assert (await rt.reload()).ok
        assert first.is_closed
        assert lifecycle.current_client is None
        second = lifecycle.client()
        assert isinstance(second, FakeClient)
        assert second.mode == "always"

        write_config(agent, {"computerUse": {"enabled": False, "approvalMode": "always"}})
        assert (await rt.reload()).ok
        assert second.is_closed
        assert lifecycle.current_client is None
        assert "computer_use_list_apps" not in session.projection.visible
        assert rt.projection_sync.apply_error(session.id) is None


@pytest.mark.parametrize(
    ("config", "model", "denied"),
    [
        ({}, "openai/gpt-5", {"apply_patch", "exec_command", "exec"}),
        (SHELL_AND_CODE, "openai/gpt-5", {"apply_patch"}),
        # Legacy Code without Shell Sessions: cells cannot reach the shell, so it is fenced.
        ({"codeMode": {"enabled": True}}, "openai/gpt-5", {"apply_patch", "exec_command"}),
        # Rules routing shell only through Code still want the shell backend.
        (
            {
                "execution": {
                    "version": 1,
                    "rules": [
                        {"id": "c", "match": "*", "patch": True, "shell": False, "code": True}
                    ],
                }
            },
            "openai/gpt-5.4",
            set(),
        ),
    ],
)
async def test_the_start_fence_follows_the_routes(
    tmp_path: Path, config: dict[str, Any], model: str, denied: set[str]
) -> None:
    from pct_runtime.runtime.descriptors import transition_of

    agent = tmp_path / "agent"
    (agent / "extensions").mkdir(parents=True)
    write_config(agent, config)
    async with Runtime(agent_dir=agent, cwd=tmp_path, model=model) as rt:
        session = await rt.open_session("mcp")
        assert transition_of(session.plan_now(), rt.config).denied_starts == denied
        assert session.denied_starts == denied
