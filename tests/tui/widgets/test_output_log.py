"""Views follow the runtime: the status list and events log update from runtime events, the
output log keeps every byte of a batched stream, and the deferred editor validates."""

from __future__ import annotations

from textual.app import App, ComposeResult

from pct_tui.widgets.output_log import OutputLog, clean
from tests.tui.conftest import wait_for


class _LogApp(App[None]):
    def compose(self) -> ComposeResult:
        yield OutputLog(max_lines=None)


async def test_output_log_batches_without_dropping() -> None:
    app = _LogApp()
    async with app.run_test(size=(80, 20)) as pilot:
        log = app.query_one(OutputLog)
        pieces = [f"line {i}\n" for i in range(5000)]
        stream = "".join(pieces) + "partial"
        for start in range(0, len(stream), 777):  # chunks that split lines anywhere
            log.feed(stream[start : start + 777])
        assert log.written == 0  # nothing written before the next frame
        await wait_for(pilot, lambda: log.pending == 0, "drained")
        assert log.written == log.received == len(stream)
        assert log.lines[:2] == ["line 0", "line 1"]
        assert log.lines[4999] == "line 4999"
        assert log.lines[-1] == "partial"
        log.feed(" line\n\x1b[31mred\x1b[0m\r\n")
        await wait_for(pilot, lambda: log.pending == 0, "drained")
        assert log.lines[5000:] == ["partial line", "red", ""]
    assert clean("a\x07b\x1b[1;32mc\x1b[0m") == "abc"
