"""SVG snapshots of every console screen (sync tests: snap_compare runs its own loop).

Every screen at 80×24 (the default terminal) and at 160×48. Deterministic: animations off,
no cursor blink, a fixed clock, fixed attach text, fixed session/job ids and an agent dir
at a fixed temporary path. Update after a reviewed change with
`pytest tests/tui/test_tui_snapshots.py --snapshot-update`.
"""

from __future__ import annotations

import itertools
import json
import os
import shutil
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path

import pytest
from filelock import FileLock
from textual.pilot import Pilot
from textual.widgets import Input

from pct_runtime.host.ui import Question
from pct_tui.app import PctApp
from pct_tui.serving import AttachInfo, attach_commands
from pct_tui.widgets.fit_text import FitText

SIZES = {"80x24": (80, 24), "160x48": (160, 48)}
AGENT = Path("/tmp/pct-tui-snapshots/agent")
URL = "http://127.0.0.1:8765/mcp"
PATCH = (
    "*** Begin Patch\n*** Add File: notes/todo.md\n+# Todo\n*** Update File: src/app.py\n"
    '@@ def main():\n-    print("hello")\n+    print("hello, console")\n*** End Patch'
)

Before = Callable[[Pilot[None]], Awaitable[None]]
Snap = Callable[..., bool]
pending: list[object] = []  # questions left open while the snapshot is taken


@pytest.fixture(params=list(SIZES), ids=list(SIZES))
def size(request: pytest.FixtureRequest) -> tuple[int, int]:
    return SIZES[request.param]


@pytest.fixture
def agent(monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    # The path is fixed (it is printed in the status text), so concurrent test runs on this
    # machine take turns: each holds the lock while it owns the directory.
    with FileLock(f"{AGENT.parent}.lock"):
        yield from _own_agent_dir(monkeypatch)


def _own_agent_dir(monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    shutil.rmtree(AGENT.parent, ignore_errors=True)
    (AGENT / "extensions").mkdir(parents=True)
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(AGENT))
    counter = itertools.count(1)

    class FixedSecrets:
        @staticmethod
        def token_hex(n: int = 6) -> str:
            return f"{next(counter):0{2 * n}d}"

    import pct_runtime.capabilities.shell.manager as shell_manager
    import pct_runtime.output.capture as capture
    from pct_runtime.output.root import open_given_root

    monkeypatch.setattr(shell_manager, "secrets", FixedSecrets)
    files = itertools.count(1)
    dirs = itertools.count(1)

    class FixedUUID:  # recovery file names
        @staticmethod
        def uuid4() -> str:
            return f"00000000-0000-0000-0000-{next(files):012d}"

    # The recovery folders: fixed names (no pid or start time), under the agent dir's parent.
    root = open_given_root(AGENT.parent)
    monkeypatch.setattr(capture, "uuid", FixedUUID)
    monkeypatch.setattr(capture, "process_capture_root", lambda: root)
    monkeypatch.setattr(capture, "folder_name", lambda: f"{capture.DIR_PREFIX}{next(dirs)}")
    yield AGENT
    os.close(root.fd)
    shutil.rmtree(AGENT.parent, ignore_errors=True)


def config(document: dict[str, object]) -> None:
    (AGENT / "extensions" / "pi-codex-toolkit.json").write_text(json.dumps(document) + "\n")


def make_app() -> PctApp:
    app = PctApp(
        agent_dir=AGENT,
        serve=False,
        watch=False,
        attach_info=AttachInfo(URL, "~/.pi/agent/pct/token", attach_commands(URL)),
        clock=lambda: "12:00:00",
        cwd=AGENT.parent,
        discover=False,  # no other runtime's timing in the picture
    )
    # A toast lives 5 s; on a loaded machine the picture could come after it left.
    app.NOTIFICATION_TIMEOUT = 3600
    return app


async def ready(pilot: Pilot[None]) -> None:
    app = pilot.app
    assert isinstance(app, PctApp)
    while not app.console_state.ready:
        await pilot.pause(0.01)
    await pilot.pause()


async def still(pilot: Pilot[None]) -> None:
    """Wait until two frames in a row are the same: on a loaded machine a refresh (a FitText
    re-fitting to its width, a status redraw) can land after the first pause."""
    for widget in pilot.app.screen.query(Input):
        widget.cursor_blink = False
    # Re-fit every FitText at its final width: one fitted before a scrollbar appeared has
    # the right lines on screen but a different height, so its scrollbar thumb differs.
    for fit in pilot.app.screen.query(FitText):
        fit.set_text(fit.source)
    await pilot.pause()
    frame = pilot.app.export_screenshot()
    for _ in range(50):
        await pilot.pause(0.02)
        again = pilot.app.export_screenshot()
        if again == frame:
            return
        frame = again


def steps(*keys: str, then: Before | None = None) -> Before:
    async def run(pilot: Pilot[None]) -> None:
        await ready(pilot)
        if then is not None:
            await then(pilot)
        for key in keys:
            await pilot.press(key)
            await pilot.pause()
        await still(pilot)

    return run


def test_status(snap_compare: Snap, agent: Path, size: tuple[int, int]) -> None:
    config({"webSearch": {"enabled": True}, "applyPatch": {"enabled": True}})
    assert snap_compare(make_app(), run_before=steps(), terminal_size=size)


def test_status_with_a_config_error(snap_compare: Snap, agent: Path, size: tuple[int, int]) -> None:
    config({"applyPatch": {"enabled": "yes"}})
    assert snap_compare(make_app(), run_before=steps(), terminal_size=size)


def test_config(snap_compare: Snap, agent: Path, size: tuple[int, int]) -> None:
    config({"computerUse": {"enabled": True, "approvalMode": "always"}, "debug": True})
    assert snap_compare(make_app(), run_before=steps("2", "down"), terminal_size=size)


def test_deferred_list(snap_compare: Snap, agent: Path, size: tuple[int, int]) -> None:
    keys = ("2", *["down"] * 16, "enter")
    assert snap_compare(make_app(), run_before=steps(*keys), terminal_size=size)


def test_rules(snap_compare: Snap, agent: Path, size: tuple[int, int]) -> None:
    rules = [
        {"id": "astra", "match": "gpt-6-astra", "patch": True, "shell": False, "code": True},
        {"id": "openai", "match": "openai/*", "patch": True, "shell": True, "code": False},
    ]
    config({"execution": {"version": 1, "rules": rules}})
    assert snap_compare(make_app(), run_before=steps("3"), terminal_size=size)


def test_rules_legacy_migration(snap_compare: Snap, agent: Path, size: tuple[int, int]) -> None:
    config({"applyPatch": {"enabled": True}, "shellSessions": {"enabled": True}})
    assert snap_compare(make_app(), run_before=steps("3"), terminal_size=size)


def _open_command_policy(preview: str = "") -> Before:
    async def run(pilot: Pilot[None]) -> None:
        from textual.widgets import OptionList

        await pilot.press("2")
        await pilot.pause()
        menu = pilot.app.screen.query_one("#config-menu", OptionList)
        ids = [menu.get_option_at_index(i).id for i in range(menu.option_count)]
        menu.highlighted = ids.index("commands")
        await pilot.press("enter")
        while type(pilot.app.screen).__name__ != "CommandsScreen":
            await pilot.pause(0.01)
        if preview:
            pilot.app.screen.query_one("#commands-try", Input).value = preview
        await pilot.pause()

    return run


COMMAND_RULES = [
    {"prefix": "git push", "decision": "deny"},
    {"prefix": "curl", "decision": "ask"},
    {"prefix": "npm test", "decision": "allow"},
]


def test_command_policy(snap_compare: Snap, agent: Path, size: tuple[int, int]) -> None:
    config({"pct": {"commands": {"default": "allow", "rules": COMMAND_RULES}}})
    before = steps(then=_open_command_policy("cd repo && bash -c 'git push origin'"))
    assert snap_compare(make_app(), run_before=before, terminal_size=size)


def test_command_rule_page(snap_compare: Snap, agent: Path, size: tuple[int, int]) -> None:
    config({"pct": {"commands": {"default": "ask", "rules": COMMAND_RULES}}})
    before = steps("e", then=_open_command_policy())
    assert snap_compare(make_app(), run_before=before, terminal_size=size)


def test_rule_page(snap_compare: Snap, agent: Path, size: tuple[int, int]) -> None:
    config({"execution": {"version": 1, "rules": []}})
    assert snap_compare(make_app(), run_before=steps("3", "a"), terminal_size=size)


async def _open_session_with_job(pilot: Pilot[None]) -> None:
    app = pilot.app
    assert isinstance(app, PctApp)
    session = await app.runtime.open_session("mcp", session_id="pct-session-demo")
    # Still running at the first answer (so its output has recovery files, whatever the
    # machine's load), then polled to completion: the picture is the same on every run.
    result = await session.call(
        "exec_command",
        {"cmd": "printf 'one\\ntwo\\n'; sleep 1; exit 3", "yield_time_ms": 250},
        tool_call_id="call-demo-1",
    )
    job = result.details["session_id"]
    while result.details.get("status", "running") == "running":
        result = await session.call(
            "write_stdin",
            {"session_id": job, "chars": "", "yield_time_ms": 3000},
            tool_call_id="call-demo-2",
        )
    await pilot.pause()


def test_sessions(snap_compare: Snap, agent: Path, size: tuple[int, int]) -> None:
    config({"shellSessions": {"enabled": True}})
    assert snap_compare(
        make_app(), run_before=steps("4", then=_open_session_with_job), terminal_size=size
    )


def test_output_viewer(snap_compare: Snap, agent: Path, size: tuple[int, int]) -> None:
    config({"shellSessions": {"enabled": True}})
    assert snap_compare(
        make_app(),
        run_before=steps("4", "down", "enter", then=_open_session_with_job),
        terminal_size=size,
    )


def test_events(snap_compare: Snap, agent: Path, size: tuple[int, int]) -> None:
    config({"shellSessions": {"enabled": True}})
    assert snap_compare(
        make_app(), run_before=steps("5", then=_open_session_with_job), terminal_size=size
    )


def test_help(snap_compare: Snap, agent: Path, size: tuple[int, int]) -> None:
    assert snap_compare(make_app(), run_before=steps("question_mark"), terminal_size=size)


def _ask(title: str, message: str) -> Before:
    async def run(pilot: Pilot[None]) -> None:
        import asyncio

        app = pilot.app
        assert isinstance(app, PctApp)
        pending.append(asyncio.ensure_future(app.ui.confirm(Question(title, message))))
        while not app.screen.query("#buttons"):  # the modal is composed (any load)
            await pilot.pause(0.01)
        await pilot.pause()

    return run


def test_patch_approval(snap_compare: Snap, agent: Path, size: tuple[int, int]) -> None:
    message = "add notes/todo.md\nupdate src/app.py\n\n" + PATCH
    before = steps(then=_ask("Code Mode: apply patch?", message))
    assert snap_compare(make_app(), run_before=before, terminal_size=size)


def test_computer_use_approval(snap_compare: Snap, agent: Path, size: tuple[int, int]) -> None:
    before = steps(then=_ask("Computer Use access", "Allow Computer Use to control Safari?"))
    assert snap_compare(make_app(), run_before=before, terminal_size=size)


def test_changed_on_disk_banner(snap_compare: Snap, agent: Path, size: tuple[int, int]) -> None:
    async def changed(pilot: Pilot[None]) -> None:
        app = pilot.app
        assert isinstance(app, PctApp)
        app.console_state.set_disk_changed(True)

    assert snap_compare(make_app(), run_before=steps(then=changed), terminal_size=size)


async def _open_session_with_a_running_job(pilot: Pilot[None]) -> None:
    app = pilot.app
    assert isinstance(app, PctApp)
    session = await app.runtime.open_session("mcp", session_id="pct-session-demo")
    result = await session.call(
        "exec_command",
        {"cmd": "echo started; sleep 60", "yield_time_ms": 250},
        tool_call_id="call-demo-1",
    )
    job = result.details["session_id"]
    calls = itertools.count(2)
    while "started" not in result.text:  # the same captured bytes on every run
        result = await session.call(
            "write_stdin",
            {"session_id": job, "chars": "", "yield_time_ms": 500},
            tool_call_id=f"call-demo-{next(calls)}",
        )
    await pilot.pause()


def test_stop_confirmation(snap_compare: Snap, agent: Path, size: tuple[int, int]) -> None:
    config({"shellSessions": {"enabled": True}})
    assert snap_compare(
        make_app(),
        run_before=steps("4", "down", "x", then=_open_session_with_a_running_job),
        terminal_size=size,
    )


def test_patch_approval_with_a_real_diff(
    snap_compare: Snap, agent: Path, size: tuple[int, int]
) -> None:
    async def ask(pilot: Pilot[None]) -> None:
        import asyncio

        from pct_runtime.capabilities.apply_patch.executor import prepare_patch
        from pct_runtime.capabilities.apply_patch.preview import question_diffs

        app = pilot.app
        assert isinstance(app, PctApp)
        project = AGENT.parent
        (project / "src").mkdir()
        (project / "src" / "app.py").write_text('import sys\n\ndef main():\n    print("hello")\n')
        prepared = prepare_patch(PATCH, project)
        message = "\n".join(op.text for op in prepared.summary) + "\n\n" + PATCH
        await app.runtime.open_session("mcp", session_id="pct-session-demo")
        question = Question(
            "Code Mode: apply patch?",
            message,
            diffs=tuple(question_diffs(prepared)),
            session_id="pct-session-demo",
            client="codex-mcp-client",
        )
        pending.append(asyncio.ensure_future(app.ui.confirm(question)))
        while not app.screen.query("#patch-diff"):
            await pilot.pause(0.01)

    assert snap_compare(make_app(), run_before=steps(then=ask), terminal_size=size)


def test_quit_guard(snap_compare: Snap, agent: Path, size: tuple[int, int]) -> None:
    assert snap_compare(make_app(), run_before=steps("2", "enter", "q"), terminal_size=size)


def test_rule_page_of_an_existing_rule(
    snap_compare: Snap, agent: Path, size: tuple[int, int]
) -> None:
    rules = [{"id": "astra", "match": "gpt-6-astra", "patch": True, "shell": False, "code": True}]
    config({"execution": {"version": 1, "rules": rules}})
    assert snap_compare(make_app(), run_before=steps("3", "e"), terminal_size=size)
