"""Shared fixtures of the end-to-end tests that drive a real `pct serve`."""

from __future__ import annotations

from pathlib import Path

import pytest
from pct_procs import write_config


@pytest.fixture
def dirs(tmp_path: Path) -> tuple[Path, Path]:
    """A private agent dir with Apply Patch and Shell Sessions on, and a work dir."""
    agent, work = tmp_path / "agent", tmp_path / "work"
    agent.mkdir()
    work.mkdir()
    write_config(agent, {"applyPatch": {"enabled": True}, "shellSessions": {"enabled": True}})
    return agent, work
