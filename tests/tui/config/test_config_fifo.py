"""A config path that turns into a FIFO while the console runs never blocks its disk check."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

from textual.app import App

from pct_runtime.runtime import Runtime
from pct_tui.console import Console


async def test_disk_check_of_a_fifo_answers_unreadable(agent_dir: Path) -> None:
    runtime = Runtime(agent_dir=agent_dir)
    await runtime.start()
    try:
        console = Console(App(), runtime)
        os.mkfifo(runtime.config_path)
        assert await asyncio.wait_for(console.disk_revision(), 10) == "unreadable"
    finally:
        await runtime.aclose()
