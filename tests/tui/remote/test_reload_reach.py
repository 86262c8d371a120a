"""A console Save and ^r Reload reach every runtime the console shows, as `pct reload`
does, and the console shows each one's answer (against the live-client double; the real
processes are driven in tests/tui/app/test_tmux.py)."""

from __future__ import annotations

from pathlib import Path

from textual.widgets import Static

from pct_tui.fanout import judge
from tests.tui.conftest import show, started, wait_for
from tests.tui.remote.helpers import agent_runtime, connected, make, notes
from tests.tui.remote.live_double import DoubleRuntime


def message(app: object, selector: str) -> str:
    return str(app.screen.query_one(selector, Static).render())  # type: ignore[attr-defined]


async def test_save_reloads_every_other_runtime_and_shows_each_answer(
    agent_dir: Path, tmp_path: Path
) -> None:
    app, backend = make(agent_dir, tmp_path)
    async with app.run_test(size=(160, 48)) as pilot:
        await started(app, pilot)
        agent = agent_runtime(backend)
        broken = backend.add(DoubleRuntime(5151, transport="http"))
        broken.reload_reply = {
            "ok": True,
            "message": "Pi Codex Toolkit configuration reloaded.",
            "apply_error": "Could not apply the configuration to this session.",
        }
        silent = backend.add(DoubleRuntime(6161))
        silent.reload_reply = TimeoutError("timed out")
        await connected(pilot, app)
        await wait_for(pilot, lambda: len(app.remotes.registered()) == 3, "three runtimes")
        await show(app, pilot, "2", "config")
        await pilot.press("enter", "ctrl+s")
        await wait_for(pilot, lambda: "Other runtimes" in message(app, "#config-message"))
        shown = message(app, "#config-message")
        assert "pct serve pid 4242 (stdio): reloaded" in shown
        assert "pct serve pid 5151 (http): apply error — Could not apply" in shown
        assert "pct serve pid 6161 (stdio): no answer — timed out" in shown
        assert (agent.reloads, broken.reloads, silent.reloads) == (1, 1, 1)


async def test_ctrl_r_reloads_the_others_too(agent_dir: Path, tmp_path: Path) -> None:
    app, backend = make(agent_dir, tmp_path)
    async with app.run_test(size=(160, 48)) as pilot:
        await started(app, pilot)
        agent = agent_runtime(backend)
        await connected(pilot, app)
        await pilot.press("ctrl+r")
        await wait_for(pilot, lambda: agent.reloads == 1, "reloaded")
        await wait_for(pilot, lambda: any("Other runtimes" in n for n in notes(app)), "shown")
        assert any("pct serve pid 4242 (stdio): reloaded" in n for n in notes(app))


async def test_a_refused_save_asks_no_one(agent_dir: Path, tmp_path: Path) -> None:
    app, backend = make(agent_dir, tmp_path, monitor=True)
    async with app.run_test(size=(160, 48)) as pilot:
        await started(app, pilot)
        agent = agent_runtime(backend)
        await connected(pilot, app)
        await show(app, pilot, "2", "config")
        await pilot.press("enter", "ctrl+s")
        await wait_for(pilot, lambda: "read-only" in message(app, "#config-message"))
        await pilot.press("ctrl+r")
        await pilot.pause(0.1)
        assert agent.reloads == 0


def test_a_config_error_is_named() -> None:
    result = judge("x", {"ok": False, "message": "Pi Codex Toolkit config error: invalid-json"})
    assert (result.state, result.ok) == ("config error", False)
    assert result.line == "x: config error — Pi Codex Toolkit config error: invalid-json"
