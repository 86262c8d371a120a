"""Write an SVG of every console screen into screenshots/ (shown in the README).

Deterministic: a fixed terminal size, animations off, no cursor blink, a fixed clock, a
fixed attach text, fixed ids, and a temporary agent dir at a fixed path (so the config path
in the status text is the same on every run).

    python scripts/screenshots.py [--out screenshots]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import itertools
import json
import os
import shutil
import sys
from pathlib import Path

SIZE = (130, 40)
AGENT_DIR = Path("/tmp/pct-screenshots/agent")
CONFIG = {
    "webSearch": {"enabled": True, "backend": "auto"},
    "codeMode": {"approvalMode": "confirm"},
    "execution": {
        "version": 1,
        "rules": [
            {"id": "codex", "match": "gpt-5*-codex*", "patch": True, "shell": True, "code": False},
            {"id": "others", "match": "*", "patch": True, "shell": False, "code": True},
        ],
    },
    "toolDiscovery": {"enabled": True},
}
MODEL = "openai/gpt-5.1-codex"
PATCH = """*** Begin Patch
*** Add File: notes/todo.md
+# Todo
+- ship the console
*** Update File: src/app.py
@@ def main():
-    print("hello")
+    print("hello, console")
*** End Patch"""


def prepare_agent_dir() -> Path:
    shutil.rmtree(AGENT_DIR.parent, ignore_errors=True)
    (AGENT_DIR / "extensions").mkdir(parents=True)
    (AGENT_DIR.parent / "project").mkdir()
    (AGENT_DIR / "extensions" / "pi-codex-toolkit.json").write_text(
        json.dumps(CONFIG, indent=2) + "\n"
    )
    os.environ["PI_CODING_AGENT_DIR"] = str(AGENT_DIR)
    os.environ["TEXTUAL_ANIMATIONS"] = "none"
    os.environ.pop("PCT_TOKEN", None)
    return AGENT_DIR


def fixed_ids() -> None:
    """Job, cell and call ids and recovery paths from counters instead of random values,
    so two runs write byte-identical pictures."""
    import pct_runtime.capabilities.code.manager as code_manager
    import pct_runtime.capabilities.shell.manager as shell_manager
    import pct_runtime.output.capture as capture
    from pct_runtime.output.root import open_given_root

    counter = itertools.count(1)

    class _Secrets:
        @staticmethod
        def token_hex(n: int = 6) -> str:
            return f"{next(counter):0{2 * n}d}"

    files = itertools.count(1)
    dirs = itertools.count(1)

    class _UUID:  # recovery file names
        @staticmethod
        def uuid4() -> str:
            return f"00000000-0000-0000-0000-{next(files):012d}"

    # The recovery folders: fixed names (no pid or start time), under the agent dir's parent.
    root = open_given_root(AGENT_DIR.parent)

    shell_manager.secrets = _Secrets  # type: ignore[assignment]
    code_manager.secrets = _Secrets  # type: ignore[assignment]
    fixed_history()
    capture.uuid = _UUID  # type: ignore[assignment]
    capture.process_capture_root = lambda: root
    capture.folder_name = lambda: f"{capture.DIR_PREFIX}{next(dirs)}"


async def shoot(out: Path) -> list[str]:
    from textual.widgets import Input, Select, Static

    from pct_runtime.host.ui import Question
    from pct_tui.app import PctApp
    from pct_tui.screens.approval import ConfirmScreen
    from pct_tui.serving import AttachInfo, attach_commands

    ConfirmScreen.GUARD_SECONDS = 0.0  # the same picture however fast the machine is

    url = "http://127.0.0.1:8765/mcp"
    attach = AttachInfo(url, "~/.pi/agent/pct/token", attach_commands(url))
    app = PctApp(
        agent_dir=AGENT_DIR,
        serve=False,
        watch=False,
        attach_info=attach,
        clock=lambda: "12:00:00",
        cwd=AGENT_DIR.parent / "project",
        model=MODEL,
    )
    app.NOTIFICATION_TIMEOUT = 3600  # a toast must not leave mid-run on a loaded machine
    written: list[str] = []

    async with app.run_test(size=SIZE) as pilot:

        async def settle() -> None:
            await pilot.pause()
            for inp in app.screen.query(Input):
                inp.cursor_blink = False
            await pilot.pause(0.05)
            await pilot.pause()

        async def save(name: str) -> None:
            await settle()
            app.save_screenshot(f"{name}.svg", path=str(out))
            written.append(f"{name}.svg")

        while not app.console_state.ready:
            await pilot.pause(0.01)
        runtime = app.runtime
        session = await runtime.open_session("mcp", session_id="pct-session-demo")
        calls = itertools.count(1)
        # All output at the end, so one poll sees it and the exit together: a poll returns
        # at new output, so output spread over time made the poll count (Events) vary.
        done = await session.call(
            "exec_command",
            {
                "cmd": "sleep 0.6; echo line 1; echo line 2; echo line 3; exit 3",
                "yield_time_ms": 250,
            },
            tool_call_id=f"call-demo-{next(calls)}",
        )
        job = done.details["session_id"]
        while done.details.get("status", "running") == "running":  # same picture under load
            done = await session.call(
                "write_stdin",
                {"session_id": job, "chars": "", "yield_time_ms": 3000},
                tool_call_id=f"call-demo-{next(calls)}",
            )
        await session.call(
            "exec_command",
            {"cmd": "echo building; sleep 30", "yield_time_ms": 250},
            tool_call_id=f"call-demo-{next(calls)}",
        )
        await save("status")
        await pilot.press("2")
        await save("config")
        await pilot.press("3")
        await save("rules")
        await pilot.press("e")
        await save("rule-edit")
        await pilot.press("escape")
        await pilot.press("4")
        await save("sessions")
        await pilot.press("down", "down", "enter")
        await save("output")
        await pilot.press("escape")
        await pilot.press("down", "x")
        await save("stop-confirmation")
        await pilot.press("n")
        await pilot.press("question_mark")
        await save("help")
        await pilot.press("escape")
        task = asyncio.ensure_future(ask_patch(app, session.cwd))
        while "apply patch" not in str(getattr(app.screen, "question_title", "")):
            await pilot.pause(0.01)
        task2 = asyncio.ensure_future(
            app.ui.confirm(
                Question(
                    "Computer Use access",
                    "Allow Computer Use to control Safari?",
                    session_id="pct-session-demo",
                    client="claude-code",
                )
            )
        )
        # The second question must be queued first ("2 waiting", "1 of 2"): under load it
        # reached the queue after the picture or before it, and two runs differed.
        while app.sub_title != "2 waiting":
            await pilot.pause(0.01)
        await save("approval-patch")
        await pilot.press("n")
        await save("approval-computer-use")
        await pilot.press("n")
        await asyncio.gather(task, task2)
        await pilot.press("5")
        await save("events")
        app.console_state.set_disk_changed(True)
        await pilot.press("1")
        await save("changed-on-disk")
        app.console_state.set_disk_changed(False)
        await pilot.press("2", "enter", "q")
        await save("quit-guard")
        await pilot.press("escape")
        await pilot.press("ctrl+p")
        await pilot.press(*"/pct")
        await save("palette")
        await pilot.press("escape")
        # last: the review session's calls change no other picture (job ids, sessions)
        await review_session(app)
        await pilot.press("6")
        # the review session's calls only: the demo's polls vary with the machine's load
        for _ in range(1000):  # the journal is read off the loop
            if "pct-session-review" in getattr(app.screen, "_sessions", ()):
                break
            await pilot.pause(0.01)
        app.screen.query_one("#history-session", Select).value = "pct-session-review"
        for _ in range(1000):
            if len(getattr(app.screen, "records", ())) == len(REVIEW_CALLS):
                break
            await pilot.pause(0.01)
        await save("history")
        await pilot.press("down", "enter")
        for _ in range(1000):  # the diff is read off the loop: wait for it, not for a time
            diffs = app.screen.query("#call-diff")
            if diffs and not str(diffs.first(Static).content).startswith("Reading the stored"):
                break
            await pilot.pause(0.01)
        await pilot.pause()
        await save("history-call")
        await pilot.press("escape")
        await app.shutdown()
    return written


async def ask_patch(app: object, cwd: Path) -> bool:
    """A nested-patch approval as Code Mode asks it: the question carries each file's real
    diff against the demo project on disk."""
    from pct_runtime.capabilities.apply_patch.executor import prepare_patch
    from pct_runtime.capabilities.apply_patch.preview import question_diffs
    from pct_runtime.host.ui import Question
    from pct_tui.app import PctApp

    assert isinstance(app, PctApp)
    (cwd / "src").mkdir(exist_ok=True)
    (cwd / "src" / "app.py").write_text(
        'import sys\n\n\ndef main():\n    print("hello")\n\n\nmain()\n'
    )
    prepared = prepare_patch(PATCH, cwd)
    message = "\n".join(op.text for op in prepared.summary) + "\n\n" + PATCH
    diffs = tuple(await asyncio.to_thread(question_diffs, prepared))
    question = Question(
        "Code Mode: apply patch?",
        message,
        diffs=diffs,
        session_id="pct-session-demo",
        client="codex-mcp-client",
    )
    return await app.ui.confirm(question)


REVIEW_CALLS: tuple[tuple[str, dict[str, object]], ...] = (
    ("exec_command", {"cmd": "echo 12 passed", "yield_time_ms": 5000}),
    (
        "apply_patch",
        {
            "patch": "*** Begin Patch\n*** Add File: docs/notes.md\n+# Notes\n"
            "+- the console lists calls\n*** End Patch"
        },
    ),
    (
        "apply_patch",
        {
            "patch": "*** Begin Patch\n*** Update File: docs/notes.md\n@@\n"
            "-- the console lists calls\n+- History lists every call\n"
            "+- u undoes a patch\n*** End Patch"
        },
    ),
    (
        "apply_patch",
        {
            "patch": "*** Begin Patch\n*** Update File: docs/missing.md\n@@\n"
            "-old\n+new\n*** End Patch"
        },
    ),
)


REVIEW_TIMES: dict[float, str] = {}


async def review_session(app: object) -> None:
    """The calls History shows: a command, two patches of one file, a refused patch; the
    last, so no other picture shows them."""
    import pct_runtime.journal.spool as spool
    from pct_runtime.capabilities.base import ToolError
    from pct_runtime.journal import Journal, JournalQuery
    from pct_tui.app import PctApp

    assert isinstance(app, PctApp)
    calls = itertools.count(1)  # call ids from here on: the demo's number of polls varies
    spool.new_call_id = lambda: f"c-{next(calls):010d}"  # type: ignore[assignment]  # the recorder's source
    review = await app.runtime.open_session("mcp", session_id="pct-session-review")
    for n, (tool, args) in enumerate(REVIEW_CALLS, 1):
        with contextlib.suppress(ToolError):  # the refused patch: journaled as an error
            await review.call(tool, args, tool_call_id=f"call-review-{n}")
    await review.close()
    await asyncio.to_thread(app.runtime.journal.flush)
    with Journal.open(AGENT_DIR) as journal:
        rows = journal.query(JournalQuery(session="pct-session-review"))
    # the n-th call reads 12:00:0n whatever else was drawn before
    REVIEW_TIMES.update({row.time: f"12:00:{n:02d}" for n, row in enumerate(reversed(rows), 1)})


def fixed_history() -> None:
    """History's times and durations as fixed strings (the journal records real ones)."""
    import pct_tui.screens.history.call as history_call
    import pct_tui.screens.history.screen as history

    history.call_time = lambda t, now=None: REVIEW_TIMES.get(t, "12:00:00")  # type: ignore[assignment]
    history.duration = history_call.duration = lambda ms: "12 ms"  # type: ignore[assignment]
    history_call.full_time = lambda t: "2026-12-01 12:00:00"  # type: ignore[assignment]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--out", default="screenshots", type=Path)
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    prepare_agent_dir()
    fixed_ids()
    try:
        written = asyncio.run(shoot(args.out.resolve()))
    finally:
        shutil.rmtree(AGENT_DIR.parent, ignore_errors=True)
    for name in written:
        print(args.out / name)
    return 0


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    sys.exit(main())
