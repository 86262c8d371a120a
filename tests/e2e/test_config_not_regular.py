"""A config path that is a FIFO or a device is refused at once, never opened for a blocking
read: `pct reload`, `pct status`, `pct serve`, `pct-tui` and a running runtime's reload."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from pct_procs import PCT, child_env, http_server

pytestmark = pytest.mark.e2e

PCT_TUI = shutil.which("pct-tui", path=str(Path(sys.executable).parent)) or "pct-tui"
FIFO_DETAIL = "config-read-failed (not a regular file: a FIFO)"


def _run(agent: Path, *argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        list(argv),
        env=child_env(agent),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def _make_fifo(agent: Path) -> Path:
    path = agent / "extensions" / "pi-codex-toolkit.json"
    path.unlink(missing_ok=True)
    os.mkfifo(path)
    return path


def test_commands_refuse_a_fifo_config_at_once(dirs: tuple[Path, Path]) -> None:
    agent, _work = dirs
    path = _make_fifo(agent)

    reload = _run(agent, PCT, "reload")
    assert reload.returncode == 1
    assert reload.stderr == (
        f"Pi Codex Toolkit config error: {FIFO_DETAIL}; using all-off defaults.\n"
    )

    status = _run(agent, PCT, "status")  # pinned: exit 0, the text says what is wrong
    assert status.returncode == 0, status.stderr
    assert f"Config error: {FIFO_DETAIL}" in status.stdout

    refusal = f"{FIFO_DETAIL}: {path} must be a regular JSON file"
    for argv in ([PCT, "serve"], [PCT, "serve", "--http", "127.0.0.1:0"], [PCT_TUI]):
        started = _run(agent, *argv)
        assert started.returncode == 1, (argv, started.stderr)
        assert refusal in started.stderr, argv


def test_a_character_device_config_is_refused(dirs: tuple[Path, Path]) -> None:
    agent, _work = dirs
    path = agent / "extensions" / "pi-codex-toolkit.json"
    path.unlink()
    path.symlink_to(os.devnull)
    reload = _run(agent, PCT, "reload")
    assert reload.returncode == 1
    assert "config-read-failed (not a regular file: a character device)" in reload.stderr


def test_a_running_runtime_reloads_a_fifo_as_an_error_and_still_stops(
    dirs: tuple[Path, Path],
) -> None:
    agent, work = dirs
    with http_server(agent, work) as (_url, proc):
        _make_fifo(agent)
        reload = _run(agent, PCT, "reload")
        assert reload.returncode == 1
        assert f"{FIFO_DETAIL}; using last known good settings." in reload.stderr
        live = _run(agent, PCT, "status", "--live")
        assert f"Config error: {FIFO_DETAIL}; using last known good settings." in live.stdout
        proc.terminate()
        assert proc.wait(15) == 0
