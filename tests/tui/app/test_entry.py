"""`pct-tui` really starts in a terminal, shows the config path and status, and quits on q."""

from __future__ import annotations

import fcntl
import os
import pty
import select
import signal
import struct
import sys
import termios
import time
from pathlib import Path


def test_pct_tui_main_in_a_pseudo_terminal(tmp_path: Path) -> None:
    env = dict(os.environ, TERM="xterm-256color", PI_CODING_AGENT_DIR=str(tmp_path / "agent"))
    pid, fd = pty.fork()
    if pid == 0:  # child: the console's real entry point
        os.execve(
            sys.executable, [sys.executable, "-c", "from pct_tui.app import main; main()"], env
        )
    # A wide terminal, so the long temporary path is drawn on one line.
    fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", 30, 250, 0, 0))
    screen = b""
    sent_quit = False
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            ready, _, _ = select.select([fd], [], [], 0.2)
            if ready:
                try:
                    chunk = os.read(fd, 65536)
                except OSError:  # EIO: the child closed the terminal
                    break
                if not chunk:
                    break
                screen += chunk
            if not sent_quit and b"Configuration loaded" in screen:
                os.write(fd, b"q")
                sent_quit = True
        _, status = os.waitpid(pid, 0)
        pid = 0
    finally:
        if pid:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
        os.close(fd)
    assert sent_quit, screen[-2000:]
    assert os.waitstatus_to_exitcode(status) == 0
    assert b"pi-codex-toolkit.json" in screen


def test_pct_tui_refuses_an_unknown_model_before_drawing(tmp_path: Path) -> None:
    import subprocess

    env = dict(os.environ, PI_CODING_AGENT_DIR=str(tmp_path / "agent"))
    done = subprocess.run(
        [sys.executable, "-c", "from pct_tui.app import main; main()", "--model", "nope/x"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 2
    assert done.stdout == ""  # nothing drawn
    assert done.stderr.strip() == (
        "pct-tui: unknown model 'nope/x': not in Pi's model registry "
        "(models.json or the built-in catalog) "
        "Run `pct models` to list the valid PROVIDER/ID values."
    )


def test_a_taken_port_exits_1_with_one_line(tmp_path: Path) -> None:
    import socket
    import subprocess

    taken = socket.socket()
    taken.bind(("127.0.0.1", 0))
    taken.listen()
    port = taken.getsockname()[1]
    env = dict(os.environ, PI_CODING_AGENT_DIR=str(tmp_path / "agent"))
    try:
        shown = subprocess.run(
            [sys.executable, "-c", "from pct_tui.app import main; main()", "--port", str(port)],
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
    finally:
        taken.close()
    assert shown.returncode == 1
    assert shown.stdout == ""
    lines = shown.stderr.splitlines()
    assert len(lines) == 1, shown.stderr
    assert lines[0].startswith("pct-tui: cannot serve: ")
    assert "in use" in lines[0]
