"""A command policy's ask from a Code Mode cell is asked whatever Code Mode's approval mode:
`always` waives a nested patch's question, never the operator's rule."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from pathlib import Path

import pytest

from pct_runtime.capabilities.apply_patch.tool import create_apply_patch_tool
from pct_runtime.capabilities.base import CallContext
from pct_runtime.capabilities.code import CodeManager
from pct_runtime.capabilities.shell import ShellManager, create_shell_tools
from pct_runtime.capabilities.shell.gate import YES_ONCE, CommandGate
from pct_runtime.capabilities.shell.policy import CommandPolicy, Rule
from pct_runtime.host.ui import NotifyLevel, NoUI, Question
from pct_runtime.output import OutputOwner

POLICY = CommandPolicy("allow", (Rule("touch", "ask"),))


class Picker:
    """A UI that answers every pick with `answer`; a confirm would be a patch's question."""

    def __init__(self, answer: str | None) -> None:
        self.answer = answer
        self.picked: list[Question] = []

    @property
    def available(self) -> bool:
        return True

    async def confirm(self, question: Question) -> bool:
        raise AssertionError("the command policy asks with a pick")

    async def select(self, question: Question) -> str | None:
        self.picked.append(question)
        return self.answer

    def notify(self, message: str, level: NotifyLevel = "info") -> None:
        return None


@pytest.fixture
async def shell(owner: OutputOwner) -> AsyncIterator[ShellManager]:
    manager = ShellManager(owner, kill_grace=0.5, confirm_window=1.0)
    yield manager
    await manager.close()


def _manager(make: Callable[..., CodeManager], shell: ShellManager) -> CodeManager:
    tools = [*create_shell_tools(shell, CommandGate(lambda: POLICY)), create_apply_patch_tool()]
    return make(tools, approval_mode="always")


async def test_always_mode_still_asks_the_command_policy(
    make_manager: Callable[..., CodeManager], shell: ShellManager, tmp_path: Path
) -> None:
    manager = _manager(make_manager, shell)
    ui = Picker(YES_ONCE)
    code = "r = await tools.exec_command(cmd='touch asked')\nprint(r['exit_code'])"
    r = await manager.exec({"code": code}, CallContext(cwd=tmp_path, session_id="s1", ui=ui))
    assert r.details["status"] == "completed", r.text
    assert len(ui.picked) == 1
    assert "⟦touch⟧ asked" in ui.picked[0].title
    assert (tmp_path / "asked").exists()


async def test_always_mode_with_no_one_to_ask_runs_nothing(
    make_manager: Callable[..., CodeManager], shell: ShellManager, tmp_path: Path
) -> None:
    manager = _manager(make_manager, shell)
    code = "await tools.exec_command(cmd='touch unasked')"
    r = await manager.exec({"code": code}, CallContext(cwd=tmp_path, session_id="s1", ui=NoUI()))
    assert "(ToolError code: approval-unavailable)" in r.text
    assert not (tmp_path / "unasked").exists()
