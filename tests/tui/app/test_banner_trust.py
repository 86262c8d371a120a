"""Pilot tests: nothing stale, no lost drafts, a cursor that stays on its job,
the core tools on the Config screen, and every screen usable at 80×24."""

from __future__ import annotations

from pathlib import Path

from pct_tui.app import PctApp
from pct_tui.widgets.banner import DiskBanner
from tests.tui.conftest import show, started, wait_for, write_config


async def test_banner_goes_away_after_a_reload_from_elsewhere(agent_dir: Path) -> None:
    write_config(agent_dir, {"debug": False})
    app = PctApp(agent_dir=agent_dir, serve=False, watch=False)
    async with app.run_test(size=(160, 48)) as pilot:
        await started(app, pilot)
        banner = app.screen.query_one(DiskBanner)
        write_config(agent_dir, {"debug": True})
        assert await app.console_state.check_disk()  # what the watcher calls
        await pilot.pause()
        assert banner.has_class("-visible")
        # `pct reload` in another terminal: the control handler calls runtime.reload()
        await app.runtime.reload()
        await wait_for(pilot, lambda: not banner.has_class("-visible"), "banner hidden")
        assert not app.console_state.disk_changed
        await show(app, pilot, "2", "config")
        assert not app.screen.query_one(DiskBanner).has_class("-visible")
