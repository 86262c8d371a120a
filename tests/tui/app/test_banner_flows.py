"""Pilot tests of the console's flows, against the real embedded runtime.

Edit and save rules; a stale save keeps the draft; nested apply_patch approvals from a real
MCP client over the console's HTTP endpoint (Yes and No); stopping a shell job from the
sessions screen; the changed-on-disk banner.
"""

from __future__ import annotations

from pathlib import Path

from textual.widgets import Static

from pct_tui.app import PctApp
from pct_tui.widgets.banner import DiskBanner
from pct_tui.widgets.fit_text import FitText
from tests.tui.conftest import started, wait_for, write_config


def shown(app: PctApp, selector: str) -> str:
    widget = app.screen.query_one(selector, Static)
    return widget.source if isinstance(widget, FitText) else str(widget.render())


async def test_changed_on_disk_banner_offers_reload(agent_dir: Path) -> None:
    path = write_config(agent_dir, {"debug": False})
    app = PctApp(agent_dir=agent_dir, serve=False)
    async with app.run_test(size=(130, 40)) as pilot:
        await started(app, pilot)
        await wait_for(
            pilot,
            lambda: any(w.name == "config-watcher" for w in app.workers),
            "watcher",
        )
        await pilot.pause(0.3)
        banner = app.screen.query_one(DiskBanner)
        assert not banner.has_class("-visible")
        # an atomic replace, as an editor or another Toolkit process does it (repeated in
        # case the watch was not yet established when the first one happened)
        temp = path.with_name(".pi-codex-toolkit.json.tmp")
        for attempt in range(10):
            temp.write_text('{"debug": true}\n' + " " * attempt)
            temp.replace(path)
            for _ in range(100):
                if banner.has_class("-visible"):
                    break
                await pilot.pause(0.02)
            if banner.has_class("-visible"):
                break
        assert banner.has_class("-visible")
        assert app.runtime.config.debug is False  # never reloads by itself
        await pilot.click("#banner-reload")
        await wait_for(pilot, lambda: app.runtime.config.debug is True, "reload")
        assert not banner.has_class("-visible")
        # our own save is not news
        await pilot.press("2")
        await wait_for(pilot, lambda: app.current_mode == "config")
        await pilot.press("enter", "ctrl+s")
        await wait_for(pilot, lambda: "saved" in shown(app, "#config-message"), "save")
        await pilot.pause(0.6)
        assert not app.screen.query_one(DiskBanner).has_class("-visible")
