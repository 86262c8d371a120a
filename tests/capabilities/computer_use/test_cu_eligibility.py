"""The Computer Use eligibility chain with the runtime probe injected (temp trees, fake server)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from cu_helpers import FAST, CuTree, build_tree

from pct_runtime.capabilities.computer_use import (
    CHATGPT_RESOURCES,
    ComputerUseClient,
    ComputerUseLifecycle,
    ComputerUseProbe,
    inspect_runtime,
    real_codex_home,
)
from pct_runtime.decide.decisions import COMPUTER_USE_RUNTIME_REASONS, decide_computer_use


def test_real_codex_home(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    assert real_codex_home({"CODEX_HOME": str(tmp_path)}) == tmp_path
    assert real_codex_home({"CODEX_HOME": "   "}) == Path.home() / ".codex"
    assert real_codex_home({}) == Path.home() / ".codex"
    assert real_codex_home({"CODEX_HOME": "~/cx"}) == Path.home() / "cx"
    monkeypatch.setenv("CODEX_HOME", str(tmp_path / "env-home"))
    assert real_codex_home() == tmp_path / "env-home"


def test_all_components_and_helper_present(tmp_path: Path) -> None:
    tree = build_tree(tmp_path)
    inspection = inspect_runtime(resources_path=tree.resources, codex_home=tree.codex_home)
    assert inspection.ok
    assert inspection.reason is None
    assert inspection.runtime == tree.runtime
    assert inspection.runtime.helper_path == (
        tree.codex_home / "computer-use" / "Codex Computer Use.app"
    )


@pytest.mark.parametrize("missing", ["codex", "node_repl", "node", "node_modules"])
def test_each_missing_component(tmp_path: Path, missing: str) -> None:
    tree = build_tree(tmp_path, skip=[missing])
    inspection = inspect_runtime(resources_path=tree.resources, codex_home=tree.codex_home)
    assert inspection.runtime is None
    assert inspection.reason == "missing-chatgpt-desktop-component"


def test_a_dangling_symlink_is_missing(tmp_path: Path) -> None:
    tree = build_tree(tmp_path, skip=["codex"])
    (tree.resources / "codex").symlink_to(tmp_path / "nowhere")
    inspection = inspect_runtime(resources_path=tree.resources, codex_home=tree.codex_home)
    assert inspection.reason == "missing-chatgpt-desktop-component"


def test_components_are_checked_before_the_helper(tmp_path: Path) -> None:
    tree = build_tree(tmp_path, helper=False, skip=["node"])
    inspection = inspect_runtime(resources_path=tree.resources, codex_home=tree.codex_home)
    assert inspection.reason == "missing-chatgpt-desktop-component"


def test_missing_helper_under_real_codex_home(tmp_path: Path) -> None:
    tree = build_tree(tmp_path, helper=False)
    other_home = tmp_path / "other-home"
    (other_home / "computer-use" / "Codex Computer Use.app").mkdir(parents=True)
    inspection = inspect_runtime(
        resources_path=tree.resources, env={"CODEX_HOME": str(tree.codex_home)}
    )
    assert inspection.reason == "missing-computer-use-helper"
    found = inspect_runtime(resources_path=tree.resources, env={"CODEX_HOME": str(other_home)})
    assert found.ok


def test_default_locations_are_fixed(tmp_path: Path) -> None:
    seen: list[Path] = []

    def exists(path: Path) -> bool:
        seen.append(path)
        return True

    inspection = inspect_runtime(exists=exists, env={"CODEX_HOME": str(tmp_path)})
    assert inspection.ok
    assert seen[:4] == [
        CHATGPT_RESOURCES / "codex",
        CHATGPT_RESOURCES / "cua_node" / "bin" / "node_repl",
        CHATGPT_RESOURCES / "cua_node" / "bin" / "node",
        CHATGPT_RESOURCES / "cua_node" / "lib" / "node_modules",
    ]
    assert seen[4] == tmp_path / "computer-use" / "Codex Computer Use.app"
    assert Path("/Applications/ChatGPT.app/Contents/Resources") == CHATGPT_RESOURCES


def _probe(tree: CuTree, **overrides: Any) -> ComputerUseProbe:
    def factory(runtime: Any) -> ComputerUseClient:
        return ComputerUseClient(runtime, env=tree.env(), temp_root=tree.root, **FAST)

    options: dict[str, Any] = {
        "resources_path": tree.resources,
        "codex_home": tree.codex_home,
        "client_factory": factory,
    }
    options.update(overrides)
    return ComputerUseProbe(**options)


@pytest.mark.parametrize(
    ("scenario", "expected"),
    [
        ({}, None),
        ({"node_repl": "failed"}, "node-repl-unavailable"),
        ({"sky_target": "linux"}, "incompatible-sky-target"),
        ({"exit_on": ["probe"]}, "node-repl-unavailable"),
    ],
)
async def test_probe_chain(cu_tree: CuTree, scenario: dict[str, Any], expected: Any) -> None:
    cu_tree.scenario(**scenario)
    assert await _probe(cu_tree).probe() == expected
    assert len(cu_tree.records("spawn")) == 1


async def test_probe_stops_at_static_failures_without_starting_anything(tmp_path: Path) -> None:
    tree = build_tree(tmp_path, helper=False)
    assert await _probe(tree).probe() == "missing-computer-use-helper"
    assert tree.records("spawn") == []
    assert _probe(tree).inspect().reason == "missing-computer-use-helper"


async def test_probe_with_an_unstartable_codex(tmp_path: Path) -> None:
    tree = build_tree(tmp_path)
    (tree.resources / "codex").write_text("not a program")  # exists, cannot execute
    assert await _probe(tree).probe() == "node-repl-unavailable"


@pytest.mark.parametrize(
    ("platform", "ui", "image", "runtime_reason", "expected"),
    [
        ("linux", True, True, None, "unsupported-platform"),
        ("darwin", False, True, None, "no-interactive-ui"),
        ("darwin", True, False, None, "model-has-no-image-input"),
        ("darwin", True, True, "missing-computer-use-helper", "missing-computer-use-helper"),
        ("darwin", True, True, None, None),
    ],
)
# The earlier links are the decisions engineer's; this checks that the probe's reason slots in.
def test_decision_chain_with_injected_probe_reason(
    platform: str, ui: bool, image: bool, runtime_reason: Any, expected: Any
) -> None:
    class Model:
        has_image_input = image

    decision = decide_computer_use(True, platform, ui, Model(), runtime_reason)  # type: ignore[arg-type]
    assert decision.reason == (expected or "")
    assert decision.effective == ("active" if expected is None else "unavailable")
    # every reason this package reports is one the decision layer knows
    assert set(COMPUTER_USE_RUNTIME_REASONS) == {
        "missing-chatgpt-desktop-component",
        "missing-computer-use-helper",
        "node-repl-unavailable",
        "incompatible-sky-target",
    }


# ------------------------------------------------------------------ lifecycle owner


async def test_lifecycle_reuses_and_resets(cu_tree: CuTree) -> None:
    made: list[ComputerUseClient] = []

    def factory(runtime: Any, mode: Any) -> ComputerUseClient:
        client = ComputerUseClient(
            runtime, approval_mode=mode, env=cu_tree.env(), temp_root=cu_tree.root, **FAST
        )
        made.append(client)
        return client

    owner = ComputerUseLifecycle(probe=_probe(cu_tree), client_factory=factory)
    try:
        first = owner.client()
        assert first is not None
        assert cu_tree.records("spawn") == []  # creating the client starts nothing
        await first.invoke("list_apps", {})
        assert owner.client() is first  # reused across turns
        await owner.set_approval_mode("confirm")  # unchanged: kept
        assert owner.client() is first
        await owner.set_approval_mode("always")  # changed: reset
        assert first.is_closed
        second = owner.client()
        assert second is not None
        assert second is not first
        assert second.approval_mode == "always"
        assert await owner.acquire("always") is second  # same mode: kept
        third = await owner.acquire("confirm")  # configured mode changed: reset first
        assert second.is_closed
        assert third is not None
        assert third.approval_mode == "confirm"
        second = third
        await owner.reset()
        assert second.is_closed
        assert owner.current_client is None
        assert await owner.status_probe() is None
    finally:
        await owner.close()
        for client in made:
            await client.close()


async def test_lifecycle_without_runtime_files(tmp_path: Path) -> None:
    tree = build_tree(tmp_path, skip=["codex"])
    owner = ComputerUseLifecycle(probe=_probe(tree))
    assert owner.client() is None
    assert owner.inspect().reason == "missing-chatgpt-desktop-component"
    assert await owner.status_probe() == "missing-chatgpt-desktop-component"
