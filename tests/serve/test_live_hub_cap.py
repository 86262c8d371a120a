"""The live hub keeps at most MAX_WORK entries: the oldest ended ones go, running work stays."""

from __future__ import annotations

import asyncio

from pct_runtime.serve.live import hub as live_hub


class EndedCell:
    """A cell as the hub's tracker reads it: an id, a state and a terminal event."""

    def __init__(self, cell_id: str, state: str) -> None:
        self.id = cell_id
        self.state = state
        self.terminal = asyncio.Event()
        if state != "running":
            self.terminal.set()


async def test_the_oldest_ended_work_goes_first_and_running_work_stays() -> None:
    hub = live_hub.LiveHub(None, kind="stdio", transport="stdio", mcp="", label="t")  # type: ignore[arg-type]
    hub._add_cell("s", EndedCell("cell-running", "running"))  # type: ignore[arg-type]
    ended = [f"cell-{i:04d}" for i in range(live_hub.MAX_WORK + 25)]
    for cell_id in ended:
        hub._add_cell("s", EndedCell(cell_id, "completed"))  # type: ignore[arg-type]
    assert len(hub.work) == live_hub.MAX_WORK
    assert "cell-running" in hub.work
    # The newest MAX_WORK - 1 ended cells are the ones kept, in order.
    assert [k for k in hub.work if k != "cell-running"] == ended[-(live_hub.MAX_WORK - 1) :]
    await hub.aclose()
