"""Smoke test: the real `pct-tui` runs in tmux, serves MCP, draws its screen, and quits on q."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

TMUX = shutil.which("tmux")
PCT_TUI = Path(sys.executable).with_name("pct-tui")

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.skipif(TMUX is None, reason="tmux is not installed (apt-get install tmux)"),
    pytest.mark.skipif(not PCT_TUI.exists(), reason="pct-tui is not installed in this venv"),
]


def _tmux(socket: str, *args: str) -> subprocess.CompletedProcess[str]:
    assert TMUX is not None
    return subprocess.run(
        [TMUX, "-L", socket, *args], capture_output=True, text=True, timeout=30, check=False
    )


def _screen(socket: str) -> str:
    return _tmux(socket, "capture-pane", "-p", "-t", "pct").stdout


def console_env(agent: Path) -> dict[str, str]:
    """The environment a console under test runs in: its own agent dir, no inherited token."""
    # COLUMNS/LINES (left by an earlier test in this worker) would override the pane's size.
    dropped = {"PCT_TOKEN", "COLUMNS", "LINES"}
    env = {k: v for k, v in os.environ.items() if k not in dropped}
    env.update(PI_CODING_AGENT_DIR=str(agent), TERM="xterm-256color")
    return env


def start_console(socket: str, env: dict[str, str], size: tuple[int, int], command: str) -> None:
    """Start `command` (the console) in a detached tmux session named `pct` of that size."""
    assert TMUX is not None
    width, height = size
    started = subprocess.run(
        [
            TMUX,
            "-L",
            socket,
            "new-session",
            "-d",
            "-s",
            "pct",
            "-x",
            str(width),
            "-y",
            str(height),
            command,
        ],
        env=env,
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )
    assert started.returncode == 0, started.stderr


def _wait(socket: str, needle: str, timeout: float = 60) -> str:
    deadline = time.monotonic() + timeout
    screen = ""
    while time.monotonic() < deadline:
        screen = _screen(socket)
        if needle in screen:
            return screen
        time.sleep(0.2)
    raise AssertionError(f"{needle!r} never appeared:\n{screen}")


def test_pct_tui_in_tmux(tmp_path: Path) -> None:
    agent = tmp_path / "agent"
    socket = f"pct-test-{uuid.uuid4().hex[:8]}"
    done = tmp_path / "exit-status"
    command = f"{PCT_TUI}; echo $? > {done}; sleep 20"  # keep the pane to read it after exit
    env = console_env(agent)
    start_console(socket, env, (160, 48), command)
    try:
        # Commands wrap whole at the column width, so the URL may sit on the next line.
        screen = _wait(socket, "--http")  # the attach commands are drawn last
        assert "http://127.0.0.1:" in screen
        assert "MCP endpoint:" in screen
        assert "Configuration loaded" in screen
        assert "Pi Codex Toolkit" in screen
        # The command is folded whole at a space, so a long temp path may put --http on the
        # next line.
        assert "pct attach codex" in screen
        assert "--http" in screen
        runtimes = list((agent / "pct" / "runtimes").glob("*.json"))
        assert len(runtimes) == 1  # registered for `pct reload` / `pct status --live`
        pct = Path(sys.executable).with_name("pct")
        if pct.exists():
            live = subprocess.run(
                [str(pct), "status", "--live"],
                env=env,
                capture_output=True,
                text=True,
                timeout=60,
                check=False,
            )
            assert live.returncode == 0, live.stderr
            assert "pct-tui (pid " in live.stdout
            assert "Sessions: 0" in live.stdout
        _tmux(socket, "send-keys", "-t", "pct", "2")
        _wait(socket, "Web Search: off")
        _tmux(socket, "send-keys", "-t", "pct", "q")
        deadline = time.monotonic() + 30
        while not done.exists() and time.monotonic() < deadline:
            time.sleep(0.1)
        assert done.read_text().strip() == "0"
        after = _screen(socket)
        assert "Traceback" not in after, after  # nothing complained on the terminal at exit
        assert list((agent / "pct" / "runtimes").glob("*.json")) == []  # unregistered
    finally:
        _tmux(socket, "kill-server")


#: What each screen shows at 80×24 once drawn (a control the operator needs).
SCREENS = (
    ("2", "Web Search: off"),
    ("3", "Add   Edit   Delete   Up   Down   Save"),
    ("4", "Sessions, shell jobs and code cells"),
    ("5", "Events: runtime, approvals"),
    ("6", "No call is journaled yet"),
    ("1", "Attach an agent"),
)


def test_pct_tui_at_80x24_visits_every_screen_and_quits(tmp_path: Path) -> None:
    agent = tmp_path / "agent"
    socket = f"pct-test-{uuid.uuid4().hex[:8]}"
    done = tmp_path / "exit-status"
    command = f"{PCT_TUI}; echo $? > {done}; sleep 20"
    env = console_env(agent)
    start_console(socket, env, (80, 24), command)
    try:
        _wait(socket, "Configuration loaded")
        for key, marker in SCREENS:
            _tmux(socket, "send-keys", "-t", "pct", key)
            screen = _wait(socket, marker)
            lines = screen.rstrip("\n").split("\n")
            assert len(lines) <= 24
            footer = lines[-1]
            assert "? Help" in footer, screen
            assert "q Quit" in footer, screen
            assert "1 Status" in screen  # the screen bar
            assert "5 Events" in screen
        _tmux(socket, "send-keys", "-t", "pct", "?")
        _wait(socket, "Pi Codex Toolkit console")
        _tmux(socket, "send-keys", "-t", "pct", "Escape")
        _wait(socket, "Attach an agent")
        # a draft makes q ask; Discard quits
        _tmux(socket, "send-keys", "-t", "pct", "2")
        _wait(socket, "Web Search: off")
        _tmux(socket, "send-keys", "-t", "pct", "Enter")
        _wait(socket, "modified")
        _tmux(socket, "send-keys", "-t", "pct", "q")
        _wait(socket, "Quit with unsaved changes?")
        _tmux(socket, "send-keys", "-t", "pct", "d")
        deadline = time.monotonic() + 30
        while not done.exists() and time.monotonic() < deadline:
            time.sleep(0.1)
        assert done.read_text().strip() == "0"
        assert "Traceback" not in _screen(socket)
        assert not (agent / "extensions" / "pi-codex-toolkit.json").exists()  # discarded
    finally:
        _tmux(socket, "kill-server")
