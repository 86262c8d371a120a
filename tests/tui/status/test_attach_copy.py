"""The Status screen's attach commands are never shortened, fold whole at 80 columns, and
`c` copies them exactly (Textual's `copy_to_clipboard`, OSC 52)."""

from __future__ import annotations

from pathlib import Path

from pct_tui.app import PctApp
from pct_tui.serving import AttachInfo, attach_commands
from pct_tui.widgets.fit_text import FitText, fold_whole
from tests.tui.conftest import started

URL = "http://127.0.0.1:43117/mcp"
LONG = "~/operator/projects/a-rather-long-directory-name/agent/pct/token"


def _app(agent_dir: Path) -> PctApp:
    info = AttachInfo(URL, LONG, attach_commands(URL))
    return PctApp(agent_dir=agent_dir, serve=False, watch=False, attach_info=info)


async def test_attach_commands_fold_whole_and_copy_exactly(agent_dir: Path) -> None:
    app = _app(agent_dir)
    async with app.run_test(size=(80, 24)) as pilot:
        await started(app, pilot)
        await pilot.pause()
        shown = str(app.screen.query_one("#attach", FitText).render())
        assert "…" not in shown
        width = app.screen.query_one("#attach", FitText).content_size.width
        # Every command is on the screen whole: its folded pieces join back to it.
        joined = shown.replace("\n", "")
        for command in (f'export PCT_TOKEN="$(cat {LONG})"', *attach_commands(URL)):
            assert command in joined
        assert all(len(line) <= width for line in shown.split("\n"))
        await pilot.press("c")
        await pilot.pause()
        assert app.clipboard == (
            f'export PCT_TOKEN="$(cat {LONG})"\n' + "\n".join(attach_commands(URL)) + "\n"
        )


async def test_monitor_offers_no_copy(agent_dir: Path) -> None:
    app = PctApp(agent_dir=agent_dir, serve=False, watch=False, monitor=True)
    async with app.run_test(size=(80, 24)) as pilot:
        await started(app, pilot)
        await pilot.press("c")
        await pilot.pause()
        assert app.clipboard == ""


def test_fold_whole_keeps_a_command_in_one_piece() -> None:
    line = '  export PCT_TOKEN="$(cat /a/very/long/path/to/the/token/file)"'
    folded = fold_whole(line, 20).split("\n")
    assert "".join(folded) == line
    assert all(len(part) <= 20 for part in folded)
    assert fold_whole("short", 20) == "short"


def test_a_command_is_cut_after_a_space_or_separator_not_inside_a_name() -> None:
    line = '  export PCT_TOKEN="$(cat /opt/pct/agent/pct/token)"'
    folded = fold_whole(line, 31).split("\n")
    assert "".join(folded) == line
    assert folded == ['  export PCT_TOKEN="$(cat ', '/opt/pct/agent/pct/token)"']
    url = "  pct attach codex --http http://127.0.0.1:39201/mcp"
    pieces = fold_whole(url, 31).split("\n")
    assert "".join(pieces) == url
    assert pieces[0] == "  pct attach codex --http "
    assert all(len(part) <= 31 for part in pieces)
