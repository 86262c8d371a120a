"""Nested adapters end to end: the one ShellManager and the Apply Patch executor.

Approval runs only when a nested apply_patch is actually dispatched, after validation and
after the invocation hooks; `confirm` needs a UI, `always` skips only the question.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest
from code_helpers import nested_tools

from pct_runtime.capabilities.base import CallContext, Prepared, ToolSpec
from pct_runtime.capabilities.code import CodeManager
from pct_runtime.capabilities.shell import ShellManager
from pct_runtime.host.ui import NotifyLevel, NoUI, Question
from pct_runtime.invocation import InvocationHooks, PolicyDecision
from pct_runtime.output import OutputOwner

PATCH = "*** Begin Patch\n*** Add File: notes/todo.md\n+first line\n*** End Patch"


class ScriptedUI:
    """A dialog-capable UI whose answer a test chooses; records every question."""

    def __init__(self, answer: bool) -> None:
        self.answer = answer
        self.asked: list[tuple[str, str]] = []

    @property
    def available(self) -> bool:
        return True

    async def confirm(self, question: Question) -> bool:
        self.asked.append((question.title, question.message))
        return self.answer

    async def select(self, question: Question) -> str | None:
        return None

    def notify(self, message: str, level: NotifyLevel = "info") -> None:
        return None


@pytest.fixture
async def shell(owner: OutputOwner) -> AsyncIterator[ShellManager]:
    manager = ShellManager(owner, kill_grace=0.5, confirm_window=1.0)
    yield manager
    await manager.close()


def _ctx(tmp_path: Path, ui: Any = None) -> CallContext:
    return CallContext(cwd=tmp_path, session_id="s1", ui=ui or NoUI())


async def test_nested_shell_returns_structured_details(
    make_manager: Callable[..., CodeManager], shell: ShellManager, tmp_path: Path
) -> None:
    manager = make_manager(nested_tools(shell))
    code = (
        "r = await tools.exec_command(cmd='echo hi; exit 3')\n"
        "[r['exit_code'], 'exitCode' in r, r['session_id'].startswith('pct-shell-'), "
        "r['stdout']]"
    )
    r = await manager.exec({"code": code}, _ctx(tmp_path))
    assert r.details["result"][:3] == [3, False, True]
    assert r.details["result"][3] == "hi\n"
    assert "nested calls: 1 completed" in r.text


async def test_nested_shell_relative_workdir_resolves_once(
    make_manager: Callable[..., CodeManager], shell: ShellManager, tmp_path: Path
) -> None:
    """`workdir="sub"` runs in <cwd>/sub, exactly as the direct tool does (not <cwd>/sub/sub)."""
    (tmp_path / "sub").mkdir()
    manager = make_manager(nested_tools(shell))
    code = "r = await tools.exec_command(cmd='pwd', workdir='sub')\nr['stdout']"
    r = await manager.exec({"code": code}, _ctx(tmp_path))
    assert r.details["result"] == f"{tmp_path / 'sub'}\n", r.text


async def test_nested_shell_outlives_its_cell(
    make_manager: Callable[..., CodeManager], shell: ShellManager, tmp_path: Path
) -> None:
    manager = make_manager(nested_tools(shell))
    code = (
        "r = await tools.exec_command(command='read line; echo got $line', yield_time_ms=0)\n"
        "r['session_id']"
    )
    r = await manager.exec({"code": code}, _ctx(tmp_path))
    session_id = r.details["result"]
    assert r.details["status"] == "completed"
    assert f"shell {session_id}: running" in r.text
    assert "continue it with write_stdin" in r.text
    # the shell still runs and is continued through Shell Sessions
    done = await shell.write({"session_id": session_id, "chars": "x\n", "yield_time_ms": 5000})
    assert done.details["status"] == "completed"
    assert "got x" in done.details["stdout"]


async def test_stopping_a_cell_ends_its_nested_poll_not_the_shell(
    make_manager: Callable[..., CodeManager], shell: ShellManager, tmp_path: Path
) -> None:
    manager = make_manager(nested_tools(shell))
    ctx = _ctx(tmp_path)
    code = (
        "r = await tools.exec_command(cmd='read line; echo got $line', yield_time_ms=0)\n"
        "print(r['session_id'])\n"
        "await tools.write_stdin(sessionId=r['session_id'], yield_time_ms=60000)\n"
    )
    r = await manager.exec({"code": code, "yield_time_ms": 500}, ctx)
    session_id = r.details["output"].strip()
    assert session_id.startswith("pct-shell-")
    stopped = await manager.wait({"cell_id": r.details["cell_id"], "terminate": True}, ctx)
    assert stopped.details["status"] == "terminated"
    assert "1 unsettled" in stopped.text
    assert shell.has_session(session_id)
    done = await shell.write({"session_id": session_id, "chars": "y\n", "yield_time_ms": 5000})
    assert "got y" in done.details["stdout"]


async def test_nested_shell_bad_arguments_run_nothing(
    make_manager: Callable[..., CodeManager], shell: ShellManager, tmp_path: Path
) -> None:
    manager = make_manager(nested_tools(shell))
    code = (
        "try:\n    await tools.exec_command(cmd='echo a', tty=True)\n"
        "except ToolError as e:\n    text(e.code)\n"
        "try:\n    await tools.write_stdin(session_id='pct-shell-nope')\n"
        "except ToolError as e:\n    text(' ' + e.code)\n"
    )
    r = await manager.exec({"code": code}, _ctx(tmp_path))
    assert r.details["output"].split() == ["invalid-arguments", "stale-session"]
    assert shell.session_ids() == []


@pytest.mark.parametrize("form", ["tools.apply_patch(P)", "tools['apply_patch']({'patch': P})"])
async def test_nested_patch_approved(
    make_manager: Callable[..., CodeManager], tmp_path: Path, form: str
) -> None:
    ui = ScriptedUI(True)
    manager = make_manager(nested_tools(None))
    r = await manager.exec({"code": f"P = {PATCH!r}\nr = await {form}\nr"}, _ctx(tmp_path, ui))
    assert r.details["status"] == "completed", r.text
    assert (tmp_path / "notes" / "todo.md").read_text() == "first line\n"
    assert r.details["result"]["operations"] == [{"operation": "add", "path": "notes/todo.md"}]
    assert len(ui.asked) == 1
    preview = ui.asked[0][1]
    assert "notes/todo.md" in preview
    assert len(preview.encode()) <= 800


async def test_nested_patch_denied_changes_nothing(
    make_manager: Callable[..., CodeManager], tmp_path: Path
) -> None:
    ui = ScriptedUI(False)
    manager = make_manager(nested_tools(None))
    r = await manager.exec({"code": f"await tools.apply_patch({PATCH!r})"}, _ctx(tmp_path, ui))
    assert "(ToolError code: approval-denied)" in r.text
    assert not (tmp_path / "notes").exists()
    assert len(ui.asked) == 1


async def test_nested_patch_headless_is_unavailable_before_any_change(
    make_manager: Callable[..., CodeManager], tmp_path: Path
) -> None:
    manager = make_manager(nested_tools(None))
    r = await manager.exec({"code": "text('no patch here')"}, _ctx(tmp_path))
    assert r.details["status"] == "completed"  # headless confirm cells run while Patch is unused
    r = await manager.exec({"code": f"await tools.apply_patch({PATCH!r})"}, _ctx(tmp_path))
    assert "(ToolError code: approval-unavailable)" in r.text
    assert not (tmp_path / "notes").exists()


async def test_always_mode_skips_only_the_question(
    make_manager: Callable[..., CodeManager], tmp_path: Path
) -> None:
    manager = make_manager(nested_tools(None), approval_mode="always")
    r = await manager.exec({"code": f"await tools.apply_patch({PATCH!r})"}, _ctx(tmp_path))
    assert r.details["status"] == "completed", r.text
    assert (tmp_path / "notes" / "todo.md").exists()
    # validation still applies
    bad = "*** Begin Patch\n*** Delete File: missing.txt\n*** End Patch"
    r = await manager.exec({"code": f"await tools.apply_patch({bad!r})"}, _ctx(tmp_path))
    assert r.details["status"] == "failed"


async def test_invalid_patch_is_rejected_before_approval(
    make_manager: Callable[..., CodeManager], tmp_path: Path
) -> None:
    ui = ScriptedUI(True)
    manager = make_manager(nested_tools(None))
    code = "await tools.apply_patch('*** Begin Patch\\n*** Bogus\\n*** End Patch')"
    r = await manager.exec({"code": code}, _ctx(tmp_path, ui))
    assert r.details["status"] == "failed"
    assert ui.asked == []
    r = await manager.exec({"code": "await tools.apply_patch(patch=1)"}, _ctx(tmp_path, ui))
    assert "(ToolError code: invalid-arguments)" in r.text
    assert ui.asked == []


async def test_invocation_hooks_apply_to_nested_calls_before_approval(
    make_manager: Callable[..., CodeManager], shell: ShellManager, tmp_path: Path
) -> None:
    seen: list[dict[str, Any]] = []

    async def policy(call: Any) -> PolicyDecision:
        seen.append(dict(call))
        if call["tool"] == "apply_patch":
            return PolicyDecision(False, "patches are reviewed elsewhere")
        return PolicyDecision(True)

    def context(call: Any) -> dict[str, Any]:
        return {"env": {"PCT_CTX": f"{call['path']}:{call.get('cellId', '')[:5]}"}}

    ui = ScriptedUI(True)
    hooks = InvocationHooks(context=context, policy=policy)
    manager = make_manager(nested_tools(shell), hooks=hooks)
    code = (
        "r = await tools.exec_command(cmd='printf %s \"$PCT_CTX\"')\n"
        f"try:\n    await tools.apply_patch({PATCH!r})\n"
        "except ToolError as e:\n    text(e.code + ': ' + e.message)\n"
        "r['stdout']"
    )
    r = await manager.exec({"code": code}, _ctx(tmp_path, ui))
    assert r.details["result"] == "nested:cell-"
    assert r.details["output"] == (
        "policy-denied: apply_patch was denied by the Toolkit invocation policy: patches are "
        "reviewed elsewhere. Nothing ran."
    )
    assert ui.asked == []
    assert not (tmp_path / "notes").exists()
    assert [c["path"] for c in seen] == ["nested", "nested"]
    assert all(c["cellId"] == r.details["cell_id"] for c in seen)


async def test_concurrent_patch_calls_all_apply(
    make_manager: Callable[..., CodeManager], tmp_path: Path
) -> None:
    manager = make_manager(nested_tools(None), approval_mode="always")
    patches = [f"*** Begin Patch\n*** Add File: f{i}.txt\n+{i}\n*** End Patch" for i in range(5)]
    code = (
        "import asyncio\n"
        f"rs = await asyncio.gather(*[tools.apply_patch(p) for p in {patches!r}])\n"
        "len(rs)"
    )
    r = await manager.exec({"code": code}, _ctx(tmp_path))
    assert r.details["result"] == 5
    names = await asyncio.to_thread(lambda: sorted(p.name for p in tmp_path.glob("f*.txt")))
    assert names == [f"f{i}.txt" for i in range(5)]


class ConcurrencyProbe:
    """Counts how many executions overlap."""

    def __init__(self, name: str, sequential: bool) -> None:
        self.spec = ToolSpec(name, name, "probe", {"type": "object"}, sequential=sequential)
        self.active = 0
        self.peak = 0

    async def prepare(self, args: Any, ctx: CallContext) -> Any:
        return Prepared(args)

    async def execute(self, prepared: Any, ctx: CallContext) -> Any:
        from pct_runtime.capabilities.base import ToolResult

        self.active += 1
        self.peak = max(self.peak, self.active)
        await asyncio.sleep(0.05)
        self.active -= 1
        return ToolResult("ok", {})


async def test_four_adapter_slots_and_sequential_patch(
    make_manager: Callable[..., CodeManager], tmp_path: Path
) -> None:
    shell = ConcurrencyProbe("exec_command", sequential=False)
    patch = ConcurrencyProbe("apply_patch", sequential=True)
    manager = make_manager([shell, patch], approval_mode="always")
    code = (
        "import asyncio\n"
        "await asyncio.gather(*[tools.exec_command(i=i) for i in range(10)])\n"
        "await asyncio.gather(*[tools.apply_patch(patch='p') for i in range(4)])\n"
    )
    r = await manager.exec({"code": code}, _ctx(tmp_path))
    assert r.details["status"] == "completed", r.text
    assert shell.peak == 4
    assert patch.peak == 1


def _described_keys(adapter: str) -> set[str]:
    """The result keys the nested-tools help (`exec`'s `uses` parameter) names for
    `tools.<adapter>(...)`.

    Reads the adapter's bullet up to its first period after `returns a dict with`, drops
    parenthesized remarks (values, not keys) and splits `a`/`b` spellings.
    """
    from pct_runtime.capabilities.code.tools import ADAPTER_HELP, EXEC_SCHEMA

    assert ADAPTER_HELP in EXEC_SCHEMA["properties"]["uses"]["description"]
    bullet = next(
        line for line in ADAPTER_HELP.splitlines() if line.startswith(f"- `await tools.{adapter}(")
    )
    _, found, rest = bullet.partition("returns a dict with ")
    assert found, f"the {adapter} bullet does not say what it returns"
    sentence = rest.split(". ")[0]
    if "the same keys as exec_command" in sentence:
        return _described_keys("exec_command")
    sentence = re.sub(r"\([^)]*\)", "", sentence)
    return {key for quoted in re.findall(r"`([^`]+)`", sentence) for key in quoted.split("/")}


async def test_exec_description_names_only_keys_a_nested_result_has(
    make_manager: Callable[..., CodeManager], shell: ShellManager, tmp_path: Path
) -> None:
    """A model that reads `r[<key>]` for a key the description names never gets KeyError."""
    manager = make_manager(nested_tools(shell), approval_mode="always")
    code = (
        "done = await tools.exec_command(cmd='echo hi')\n"
        "live = await tools.exec_command(cmd='read line; echo got $line', yield_time_ms=0)\n"
        "polled = await tools.write_stdin(session_id=live['session_id'], chars='x\\n', "
        "yield_time_ms=5000)\n"
        f"patched = await tools.apply_patch({PATCH!r})\n"
        "{'exec_command': [sorted(done), sorted(live)], 'write_stdin': [sorted(polled)], "
        "'apply_patch': [sorted(patched)]}"
    )
    r = await manager.exec({"code": code}, _ctx(tmp_path))
    assert r.details["status"] == "completed", r.text
    for adapter, results in r.details["result"].items():
        named = _described_keys(adapter)
        assert len(named) >= 2, (adapter, named)
        for keys in results:
            assert named <= set(keys), f"{adapter}: described {sorted(named - set(keys))} missing"
