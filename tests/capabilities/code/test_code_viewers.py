"""Viewer hooks of Code Mode: `subscribe`, `cells`, `CellView` output and `stop_cell`."""

from __future__ import annotations

import asyncio

from pct_runtime.capabilities.base import CallContext
from pct_runtime.capabilities.code import CodeManager
from pct_runtime.capabilities.code.manager import CellView


async def test_viewers_see_cells_output_and_can_stop_them(
    manager: CodeManager, ctx: CallContext
) -> None:
    views: list[CellView] = []
    chunks: list[str] = []

    def on_cell(view: CellView) -> None:
        views.append(view)
        view.add_output_listener(chunks.append)

    manager.subscribe(on_cell)
    code = "text('hello')\nwhile True:\n    pass"
    result = await manager.exec({"code": code, "yield_time_ms": 300}, ctx)
    assert result.details["status"] == "running", result.text
    assert len(views) == 1
    view = views[0]
    assert [c.id for c in manager.cells()] == [view.id]
    assert view.state == "running"
    for _ in range(100):
        if "hello" in "".join(chunks):
            break
        await asyncio.sleep(0.02)
    assert "hello" in "".join(chunks)
    records = view.recovery()
    assert set(records) == {"output", "result", "error"}
    if view.output_text() is None:  # the yield published a recovery file
        assert records["output"].path is not None
    assert await view.stop() is True
    await asyncio.wait_for(view.terminal.wait(), 10)
    assert view.state == "terminated"
    assert await manager.stop_cell(view.id) is False  # already finished
    assert await manager.stop_cell("cell-unknown") is False
