"""Console test fixtures and Pilot helpers: a temporary agent dir, a deterministic
environment, waiting, writing the config, reading a label, switching screens."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from textual.pilot import Pilot
from textual.widgets import Label, OptionList, Static

from pct_tui.app import PctApp
from pct_tui.screens.approval import ConfirmScreen
from pct_tui.widgets.fit_text import FitText


@pytest.fixture(autouse=True)
def _console_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("TEXTUAL_THEME", "NO_COLOR", "TEXTUAL_COLOR_SYSTEM", "PCT_TOKEN"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("TEXTUAL_ANIMATIONS", "none")
    # Pilot presses come at once; the keystroke guard has its own test (test_modal_guard).
    monkeypatch.setattr(ConfirmScreen, "GUARD_SECONDS", 0.0)


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


def write_config(agent_dir: Path, document: object) -> Path:
    """Write `document` as the agent dir's toolkit config file (as a user or Pi would)."""
    path = agent_dir / "extensions" / "pi-codex-toolkit.json"
    path.write_text(json.dumps(document, indent=2) + "\n")
    return path


def text(app: PctApp, selector: str) -> str:
    """The full text of a label (a FitText's source, before it is shortened to fit)."""
    widget = app.screen.query_one(selector)
    if isinstance(widget, FitText):
        return widget.source
    assert isinstance(widget, Static | Label)
    return str(widget.render())


async def started(app: PctApp, pilot: Pilot[None]) -> None:
    await wait_for(pilot, lambda: app.console_state.ready, "runtime start")


async def show(app: PctApp, pilot: Pilot[None], key: str, mode: str) -> None:
    """Press a screen's key and wait until that screen is the current mode."""
    await pilot.press(key)
    await wait_for(pilot, lambda: app.current_mode == mode, mode)


async def highlight(app: PctApp, pilot: Pilot[None], key: str) -> None:
    """Put the Config menu's highlight on the item `key`."""
    menu = app.screen.query_one("#config-menu", OptionList)
    menu.highlighted = menu.get_option_index(key)
    await pilot.pause()


def screen_lines(app: PctApp) -> list[str]:
    """The current screen as drawn, one string a row (what a terminal would show)."""
    strips = app.screen._compositor.render_strips()
    return ["".join(segment.text for segment in strip) for strip in strips]
