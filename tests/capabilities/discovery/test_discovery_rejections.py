"""Every `find_tools` rejection reason, the atomic Computer Use group and the joint
Shell/Code pairs — through a real runtime session (and the pure layer where a valid
config cannot reach the case)."""

from __future__ import annotations

from pathlib import Path

import pytest
from discovery_support import CODEX, CU, DialogUI, EchoTool, discovery, find, open_one

from pct_runtime.capabilities.table import CAPABILITIES
from pct_runtime.config import parse_config
from pct_runtime.config.schema import ToolDiscoveryConfig
from pct_runtime.decide.discovery import discovery_state, load_names
from pct_runtime.decide.projection import ProjectionInputs, plan_projection
from pct_runtime.host.pi.names import OWNED_TOOL_NAMES
from pct_runtime.host.pi.tool_registry import RUNTIME_OWNER, ToolRegistry

EVERY = [
    "openai_web_search",
    "openai_generate_image",
    "apply_patch",
    "exec_command",
    "write_stdin",
    "exec",
    "wait",
    *CU,
]


@pytest.fixture(autouse=True)
def _computer_use_files_present(monkeypatch: pytest.MonkeyPatch) -> None:
    """The static ChatGPT.app file checks pass (the runtime asks only on darwin)."""
    from pct_runtime.capabilities.computer_use.eligibility import RuntimeInspection

    monkeypatch.setattr(
        "pct_runtime.capabilities.computer_use.eligibility.inspect_runtime",
        lambda: RuntimeInspection(None, None),
    )


async def test_not_managed_and_disabled(tmp_path: Path) -> None:
    runtime, session = await open_one(tmp_path, discovery(["apply_patch"]))
    text = await find(session, load=["apply_patch", "exec_command", "bash", "find_tools"])
    assert text == (
        "Rejected:\n- apply_patch: disabled\n- exec_command: not-managed\n"
        "- bash: not-managed\n- find_tools: not-managed"
    )
    assert "apply_patch" not in session.projection.visible
    await runtime.aclose()


async def test_not_registered_when_the_allowlist_drops_the_name(tmp_path: Path) -> None:
    cfg = discovery(["apply_patch", "openai_generate_image"], applyPatch={"enabled": True})
    runtime, session = await open_one(tmp_path, cfg, allowlist=["find_tools", "apply_patch"])
    assert await find(session, load=["openai_generate_image", "apply_patch"]) == (
        "Loaded: apply_patch\nRejected:\n- openai_generate_image: not-registered"
    )
    await runtime.aclose()


async def test_conflicting_tool_name_for_a_foreign_winner(tmp_path: Path) -> None:
    cfg = discovery(["openai_generate_image"], imageGeneration={"enabled": True})
    foreign = EchoTool("openai_generate_image", "Another extension's image tool.")
    runtime, session = await open_one(tmp_path, cfg, extra_tools=[foreign])
    assert await find(session, load=["openai_generate_image"]) == (
        "Rejected:\n- openai_generate_image: conflicting-tool-name"
    )
    assert await find(session, query="image") == (
        "Matches (1):\n- openai_generate_image [unavailable: conflicting-tool-name] "
        "Generate one PNG image with OpenAI gpt-image-2 from a text prompt."
    )
    await runtime.aclose()


async def test_native_backend_and_sidecar_reasons(tmp_path: Path) -> None:
    native = discovery(["openai_web_search"], webSearch={"enabled": True, "backend": "native"})
    runtime, session = await open_one(tmp_path, native, kind="embedded")
    assert await find(session, load=["openai_web_search"]) == (
        "Rejected:\n- openai_web_search: native-backend"
    )
    await runtime.aclose()
    sidecar = discovery(["openai_web_search"], webSearch={"enabled": True, "backend": "sidecar"})
    runtime, session = await open_one(tmp_path, sidecar)
    assert await find(session, load=["openai_web_search"]) == (
        "Rejected:\n- openai_web_search: missing-sidecar-model"
    )
    await runtime.aclose()
    with_model = discovery(
        ["openai_web_search"],
        webSearch={
            "enabled": True,
            "backend": "sidecar",
            "sidecarModel": {"provider": "openai-codex", "model": "gpt-5.4"},
        },
    )
    runtime, session = await open_one(tmp_path, with_model)
    assert await find(session, load=["openai_web_search"]) == "Loaded: openai_web_search"
    assert "openai_web_search" in session.projection.visible
    await runtime.aclose()


async def test_image_feature_reasons(tmp_path: Path) -> None:
    cfg = discovery(["openai_generate_image"], imageGeneration={"enabled": True})
    runtime, session = await open_one(tmp_path, cfg, model=None)
    assert await find(session, load=["openai_generate_image"]) == (
        "Rejected:\n- openai_generate_image: current-model-missing"
    )
    await runtime.aclose()
    runtime, session = await open_one(tmp_path, cfg, credentials=False)
    assert await find(session, load=["openai_generate_image"]) == (
        "Rejected:\n- openai_generate_image: missing-openai-auth"
    )
    await runtime.aclose()


async def test_computer_use_group_is_atomic(tmp_path: Path) -> None:
    cfg = discovery(CU, computerUse={"enabled": True})
    runtime, session = await open_one(tmp_path, cfg, platform="darwin", ui=DialogUI())
    assert not set(CU) & set(session.projection.visible)
    states = await find(session, query="computer")
    assert states.count("[eligible]") == 6
    assert await find(session, load=["computer_use_click"]) == f"Loaded: {', '.join(CU)}"
    assert set(CU) <= set(session.projection.visible)
    assert (await session.call("computer_use_scroll", {})).text == "computer_use_scroll ran"
    await runtime.aclose()


async def test_group_feature_reasons_are_group_blocked(tmp_path: Path) -> None:
    cfg = discovery(CU, computerUse={"enabled": True})
    runtime, session = await open_one(tmp_path, cfg, platform="linux", ui=DialogUI())
    reason = "group blocked by computer_use_list_apps: unsupported-platform"
    assert await find(session, load=["computer_use_type_text"]) == "\n".join(
        ["Rejected:", *(f"- {name}: {reason}" for name in CU)]
    )
    await runtime.aclose()
    runtime, session = await open_one(tmp_path, cfg, platform="darwin")
    text = await find(session, load=["computer_use_click"])
    assert (
        "- computer_use_click: group blocked by computer_use_list_apps: no-interactive-ui" in text
    )
    await runtime.aclose()
    runtime, session = await open_one(tmp_path, discovery(CU), platform="darwin", ui=DialogUI())
    text = await find(session, load=["computer_use_press_key"])
    assert "- computer_use_scroll: group blocked by computer_use_list_apps: disabled" in text
    await runtime.aclose()


async def test_one_foreign_member_blocks_the_whole_group(tmp_path: Path) -> None:
    cfg = discovery(CU, computerUse={"enabled": True})
    runtime, session = await open_one(
        tmp_path,
        cfg,
        platform="darwin",
        ui=DialogUI(),
        extra_tools=[EchoTool("computer_use_click")],
    )
    text = await find(session, load=["computer_use_list_apps", "computer_use_scroll"])
    reason = "group blocked by computer_use_click: conflicting-tool-name"
    assert text == "\n".join(["Rejected:", *(f"- {name}: {reason}" for name in CU)])
    state = await find(session, query="computer_use_list_apps")
    assert f"- computer_use_list_apps [unavailable: {reason}]" in state
    await runtime.aclose()


def test_group_incomplete_when_a_member_is_not_managed() -> None:
    """A valid config always lists all six or none, so build the plan directly."""
    base = parse_config({"computerUse": {"enabled": True}})
    partial = ToolDiscoveryConfig(enabled=True, deferred=("computer_use_click",))
    cfg = base.model_copy(update={"tool_discovery": partial})
    reg = ToolRegistry.with_natives()
    for name in OWNED_TOOL_NAMES:
        reg.register(name, RUNTIME_OWNER)
    snapshot = reg.snapshot()
    plan = plan_projection(
        ProjectionInputs(
            config=cfg,
            model=CODEX,
            registry=__import__("discovery_support").registry(),
            tools=snapshot,
            active=tuple(snapshot.names),
            ui_available=True,
            platform="darwin",
        ),
        CAPABILITIES,
    )
    result = load_names(["computer_use_click"], plan)
    reason = "group incomplete: computer_use_list_apps is not managed"
    assert result.loaded == ()
    assert result.rejected == tuple((name, reason) for name in CU)
    assert discovery_state("computer_use_click", plan) == f"unavailable: {reason}"


async def test_shell_pair_is_checked_jointly_but_only_the_requested_name_loads(
    tmp_path: Path,
) -> None:
    cfg = discovery(["exec_command", "write_stdin"], shellSessions={"enabled": True})
    runtime, session = await open_one(tmp_path, cfg)
    assert await find(session, load=["exec_command"]) == "Loaded: exec_command"
    assert "exec_command" in session.projection.visible
    assert "write_stdin" not in session.projection.visible
    assert "- write_stdin [eligible]" in await find(session, query="write_stdin")
    await runtime.aclose()


async def test_a_foreign_or_absent_sibling_rejects_the_pair_member(tmp_path: Path) -> None:
    cfg = discovery(["exec", "wait"], codeMode={"enabled": True}, shellSessions={"enabled": True})
    runtime, session = await open_one(tmp_path, cfg, extra_tools=[EchoTool("wait")])
    assert await find(session, load=["exec"]) == "Rejected:\n- exec: conflicting-tool-name"
    await runtime.aclose()
    shell = discovery(["exec_command", "write_stdin"], shellSessions={"enabled": True})
    runtime, session = await open_one(tmp_path, shell, allowlist=["find_tools", "exec_command"])
    assert await find(session, load=["exec_command"]) == (
        "Rejected:\n- exec_command: not-registered"
    )
    await runtime.aclose()


async def test_nested_only_names_are_not_loadable(tmp_path: Path) -> None:
    cfg = discovery(
        ["apply_patch", "exec", "wait"],
        execution={
            "version": 1,
            "rules": [{"id": "all", "match": "*", "patch": True, "shell": False, "code": True}],
        },
    )
    runtime, session = await open_one(tmp_path, cfg)
    # exec/wait are eager replacements (visible although deferred); apply_patch is nested-only.
    assert {"exec", "wait"} <= set(session.projection.visible)
    assert await find(session, load=["apply_patch", "exec"]) == (
        "Loaded: exec\nRejected:\n- apply_patch: nested-only"
    )
    await runtime.aclose()


async def test_every_managed_name_has_a_state(tmp_path: Path) -> None:
    cfg = discovery(EVERY, applyPatch={"enabled": True})
    runtime, session = await open_one(tmp_path, cfg)
    backend_states = {
        line.split(" [")[0][2:]: line.split(" [")[1].split("]")[0]
        for line in (await find(session, query="a")).splitlines()[1:]
        if line.startswith("- ")
    }
    assert backend_states.get("apply_patch") == "eligible"
    await find(session, load=["apply_patch"])
    assert "- apply_patch [active]" in await find(session, query="apply_patch")
    await runtime.aclose()
