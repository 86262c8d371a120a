"""Console test fixtures: a temporary agent dir, a deterministic environment, waiting helpers."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from textual.pilot import Pilot


@pytest.fixture(autouse=True)
def _console_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("TEXTUAL_THEME", "NO_COLOR", "TEXTUAL_COLOR_SYSTEM", "PCT_TOKEN"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("TEXTUAL_ANIMATIONS", "none")


@pytest.fixture
def agent_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "agent"
    (path / "extensions").mkdir(parents=True)
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(path))
    return path


async def wait_for(pilot: Pilot[None], condition: Callable[[], bool], what: str = "") -> None:
    """Let the app run until `condition()` holds (no fixed sleeps)."""
    for _ in range(1500):
        if condition():
            return
        await pilot.pause(0.01)
    raise AssertionError(f"timed out waiting for {what or condition}")
