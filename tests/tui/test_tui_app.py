"""The console starts, shows the config path and whether it loaded, and quits on q / ctrl+q."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.pilot import Pilot
from textual.widgets import Static

from pct_tui.app import PctApp


def text_of(app: PctApp, selector: str) -> str:
    return str(app.query_one(selector, Static).render())


async def settled_status(app: PctApp, pilot: Pilot[None]) -> str:
    """The status line once the background read has reported (the read runs in a thread)."""
    for _ in range(200):
        await pilot.pause(0.01)
        text = text_of(app, "#config-status")
        if text != "Reading configuration…":
            return text
    raise AssertionError("the configuration read never reported")


@pytest.mark.parametrize("key", ["q", "ctrl+q"])
async def test_starts_shows_path_and_quits(tmp_path: Path, key: str) -> None:
    path = tmp_path / "extensions" / "pi-codex-toolkit.json"
    app = PctApp(path)
    async with app.run_test() as pilot:
        assert text_of(app, "#config-path") == f"Config: {path}"
        assert await settled_status(app, pilot) == (
            "Configuration loaded (no file yet: all-off defaults)."
        )
        assert app.return_code is None  # still running
        await pilot.press(key)
        await pilot.pause()
        assert app.return_code == 0  # the key asked the app to exit
    assert not path.exists()


async def test_shows_the_read_error(tmp_path: Path) -> None:
    path = tmp_path / "pi-codex-toolkit.json"
    path.write_text('{"applyPatch":{"enabled":"yes"}}')
    app = PctApp(path)
    async with app.run_test() as pilot:
        assert await settled_status(app, pilot) == (
            "Pi Codex Toolkit config error: invalid-config (applyPatch.enabled must be true or "
            "false); using all-off defaults."
        )
        assert app.query_one("#config-status", Static).has_class("error")
        await pilot.press("q")


async def test_default_path_follows_the_agent_dir(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(tmp_path))
    (tmp_path / "extensions").mkdir()
    (tmp_path / "extensions" / "pi-codex-toolkit.json").write_text('{"debug": true}\n')
    app = PctApp()
    async with app.run_test() as pilot:
        assert await settled_status(app, pilot) == "Configuration loaded."
        assert text_of(app, "#config-path") == (
            f"Config: {tmp_path}/extensions/pi-codex-toolkit.json"
        )
        await pilot.press("q")
