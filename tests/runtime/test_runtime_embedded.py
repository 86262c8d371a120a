"""The embedder API: build a Runtime with invocation hooks, open sessions, call tools."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from pct_runtime.capabilities.base import ToolError
from pct_runtime.host.ui import Question
from pct_runtime.invocation import InvocationHooks, PolicyDecision
from pct_runtime.runtime import (
    RUNTIME_EVENTS_CHANNEL,
    CapabilityBinding,
    Runtime,
    UnknownModelError,
)
from tests.serve.serve_doubles import Echo, FakeApplyPatch


@pytest.fixture
def agent_dir(tmp_path: Path) -> Path:
    d = tmp_path / "agent"
    (d / "extensions").mkdir(parents=True)
    (d / "extensions" / "pi-codex-toolkit.json").write_text(
        json.dumps({"applyPatch": {"enabled": True}}), encoding="utf-8"
    )
    return d


def patch_binding(patch: FakeApplyPatch, closed: list[str] | None = None) -> CapabilityBinding:
    def build(services: Any) -> list[Any]:
        if closed is not None:

            async def closer() -> None:
                closed.append(services.session_id)

            services.on_close(closer)
        return [patch]

    return CapabilityBinding("apply_patch", ("apply_patch",), build)


async def test_policy_denial_has_the_exact_text_and_nothing_runs(agent_dir: Path) -> None:
    patch = FakeApplyPatch()
    calls: list[dict[str, Any]] = []

    def policy(call: Any) -> Any:
        calls.append(dict(call))
        return {"allow": False, "reason": "patches are reviewed elsewhere"}

    async with Runtime(
        agent_dir=agent_dir,
        hooks=InvocationHooks(policy=policy),
        bindings=[patch_binding(patch)],
        cwd=agent_dir,
    ) as runtime:
        session = await runtime.open_session("embedded")
        with pytest.raises(ToolError) as info:
            await session.call("apply_patch", {"patch": "*** Begin Patch\n*** End Patch"})
        assert info.value.message == (
            "apply_patch was denied by the Toolkit invocation policy: "
            "patches are reviewed elsewhere. Nothing ran."
        )
        assert patch.contexts == []
        # the call record carries control identity only — never the patch text
        assert calls == [
            {
                "tool": "apply_patch",
                "path": "direct",
                "cwd": str(agent_dir),
            }
        ]


async def test_real_apply_patch_runs_the_hooks_after_normalization(
    agent_dir: Path, tmp_path: Path
) -> None:
    """The real tool: a malformed call is its own error and no hook runs; a well-formed one
    reaches the policy with control identity only, and a denial changes nothing."""
    calls: list[dict[str, Any]] = []

    def policy(call: Any) -> Any:
        calls.append(dict(call))
        return {"allow": False, "reason": "patches are reviewed elsewhere"}

    work = tmp_path / "work"
    work.mkdir()
    async with Runtime(
        agent_dir=agent_dir, hooks=InvocationHooks(policy=policy), cwd=work
    ) as runtime:
        session = await runtime.open_session("embedded")
        with pytest.raises(ToolError) as info:
            await session.call("apply_patch", {"patch": 5})
        assert info.value.code == "invalid-arguments"
        assert calls == []
        patch = "*** Begin Patch\n*** Add File: a.txt\n+x\n*** End Patch"
        with pytest.raises(ToolError) as info:
            await session.call("apply_patch", {"patch": patch})
        assert info.value.code == "policy-denied"
        assert calls == [{"tool": "apply_patch", "path": "direct", "cwd": str(work)}]
        assert not (work / "a.txt").exists()


async def test_context_env_applies_to_that_call_only(agent_dir: Path) -> None:
    patch = FakeApplyPatch()
    counter = iter(range(100))

    async def context(call: Any) -> Any:
        await asyncio.sleep(0)
        return {"env": {"MY_CONTEXT_ID": f"ctx-{next(counter)}"}}

    hooks = InvocationHooks(context=context, policy=lambda call: PolicyDecision(True))
    async with Runtime(
        agent_dir=agent_dir, hooks=hooks, bindings=[patch_binding(patch)]
    ) as runtime:
        session = await runtime.open_session("embedded")
        await session.call("apply_patch", {"patch": "p"})
        await session.call("apply_patch", {"patch": "p"})
        assert [dict(c.env_overlay or {}) for c in patch.contexts] == [
            {"MY_CONTEXT_ID": "ctx-0"},
            {"MY_CONTEXT_ID": "ctx-1"},
        ]


async def test_nested_calls_get_the_same_hooks_with_cell_id(agent_dir: Path) -> None:
    patch = FakeApplyPatch()
    seen: list[dict[str, Any]] = []

    def policy(call: Any) -> Any:
        seen.append(dict(call))
        return {"allow": True}

    async with Runtime(
        agent_dir=agent_dir, hooks=InvocationHooks(policy=policy), bindings=[patch_binding(patch)]
    ) as runtime:
        session = await runtime.open_session("embedded")
        await session.call("apply_patch", {"patch": "p"}, path="nested", cell_id="cell-1")
        assert seen[0]["path"] == "nested"
        assert seen[0]["cellId"] == "cell-1"
        assert patch.contexts[0].path == "nested"
        assert patch.contexts[0].cell_id == "cell-1"


async def test_async_hook_rechecks_admission(agent_dir: Path) -> None:
    patch = FakeApplyPatch()
    runtime_box: list[Runtime] = []

    async def policy(call: Any) -> Any:
        # the capability is switched off while the hook runs
        (agent_dir / "extensions" / "pi-codex-toolkit.json").write_text("{}", encoding="utf-8")
        await runtime_box[0].reload()
        return {"allow": True}

    async with Runtime(
        agent_dir=agent_dir, hooks=InvocationHooks(policy=policy), bindings=[patch_binding(patch)]
    ) as runtime:
        runtime_box.append(runtime)
        session = await runtime.open_session("embedded")
        with pytest.raises(ToolError) as info:
            await session.call("apply_patch", {"patch": "p"})
        assert info.value.message == "Apply Patch is not enabled."
        assert patch.contexts == []


async def test_model_change_and_reload_keep_work_and_close_cleans_up(agent_dir: Path) -> None:
    patch = FakeApplyPatch()
    closed: list[str] = []
    events: list[dict[str, Any]] = []
    async with Runtime(
        agent_dir=agent_dir, model="openai/gpt-5", bindings=[patch_binding(patch, closed)]
    ) as runtime:
        runtime.events.subscribe(RUNTIME_EVENTS_CHANNEL, events.append)
        session = await runtime.open_session("embedded")
        assert session.model is not None
        assert session.model.key == "openai/gpt-5"
        await session.set_model("openai-codex/gpt-5.1-codex-max")
        assert session.model is not None
        assert session.model.key == "openai-codex/gpt-5.1-codex-max"
        assert (await runtime.reload()).ok
        assert closed == []  # model change and an unchanged reload keep the session's work
        await session.close()
        assert closed == [session.id]
        with pytest.raises(ToolError) as info:
            await session.call("apply_patch", {"patch": "p"})
        assert info.value.code == "session-closed"
    types_seen = [e["type"] for e in events]
    assert types_seen == ["session-opened", "model-changed", "reloaded", "session-closed"]


async def test_model_defaults_to_pi_settings(agent_dir: Path) -> None:
    (agent_dir / "settings.json").write_text(
        json.dumps({"defaultProvider": "openai", "defaultModel": "gpt-5.1"}), encoding="utf-8"
    )
    async with Runtime(agent_dir=agent_dir, bindings=[]) as runtime:
        session = await runtime.open_session()
        assert session.model is not None
        assert session.model.key == "openai/gpt-5.1"
    async with Runtime(agent_dir=agent_dir, model="openai/o3", bindings=[]) as runtime:
        model = (await runtime.open_session()).model
        assert model is not None
        assert model.key == "openai/o3"
    with pytest.raises(UnknownModelError):
        async with Runtime(agent_dir=agent_dir, model="openai/nope", bindings=[]):
            pass


async def test_allowlist_filters_names(agent_dir: Path) -> None:
    patch = FakeApplyPatch()
    async with Runtime(
        agent_dir=agent_dir,
        allowlist=["echo"],
        extra_tools=[Echo()],
        bindings=[patch_binding(patch)],
    ) as runtime:
        session = await runtime.open_session()
        assert [s.name for s in session.tool_specs()] == ["echo"]
        with pytest.raises(ToolError) as info:
            await session.call("apply_patch", {"patch": "p"})
        assert info.value.message == "Apply Patch is not enabled."


async def test_sequential_tools_do_not_overlap(agent_dir: Path) -> None:
    from pct_runtime.capabilities.base import ToolResult, ToolSpec

    active = 0
    peak = 0

    class Seq:
        spec = ToolSpec("seq", "Seq", "sequential", {"type": "object"}, sequential=True)

        async def __call__(self, args: Any, ctx: Any) -> ToolResult:
            nonlocal active, peak
            active += 1
            peak = max(peak, active)
            await asyncio.sleep(0.01)
            active -= 1
            return ToolResult(text="ok")

    async with Runtime(agent_dir=agent_dir, extra_tools=[Seq()], bindings=[]) as runtime:
        session = await runtime.open_session()
        await asyncio.gather(*(session.call("seq", {}) for _ in range(4)))
    assert peak == 1


async def test_session_start_warns_once_about_a_broken_config(tmp_path: Path) -> None:
    agent = tmp_path / "agent"
    (agent / "extensions").mkdir(parents=True)
    (agent / "extensions" / "pi-codex-toolkit.json").write_text("{", encoding="utf-8")
    notes: list[tuple[str, str]] = []

    class Console:
        available = True

        async def confirm(self, question: Question) -> bool:
            return False

        async def select(self, question: Question) -> str | None:
            return None

        def notify(self, message: str, level: str = "info") -> None:
            notes.append((level, message))

    async with Runtime(agent_dir=agent, bindings=[]) as runtime:
        await runtime.open_session("embedded")  # no UI: nothing shown
        assert notes == []
        runtime.attach_ui(Console())
        await runtime.open_session("embedded")
        assert notes == [
            (
                "warning",
                "Pi Codex Toolkit config error: invalid-json (line 1 column 2); "
                "using all-off defaults.",
            )
        ]


async def test_the_default_model_follows_the_project_settings_in_the_runtime_cwd(
    tmp_path: Path,
) -> None:
    agent, project = tmp_path / "agent", tmp_path / "project"
    agent.mkdir()
    (project / ".pi").mkdir(parents=True)
    (agent / "settings.json").write_text(
        json.dumps({"defaultProvider": "openai-codex", "defaultModel": "gpt-5.4"}), "utf-8"
    )
    (project / ".pi" / "settings.json").write_text(json.dumps({"defaultModel": "gpt-5.1"}))
    async with Runtime(agent_dir=agent, cwd=project) as runtime:
        assert runtime.default_model is not None
        assert runtime.default_model.key == "openai-codex/gpt-5.1"
    async with Runtime(agent_dir=agent, cwd=tmp_path) as runtime:
        assert runtime.default_model is not None
        assert runtime.default_model.key == "openai-codex/gpt-5.4"


async def test_live_status_after_a_broken_reload_carries_the_config_error(
    agent_dir: Path,
) -> None:
    """With no session open, the live text must not send the user to `pct status` (which
    reads the broken file) when the runtime runs on its last known good settings."""
    async with Runtime(agent_dir=agent_dir, cwd=agent_dir) as runtime:
        text = runtime.live_status_text("pct serve (pid 1, stdio)")
        assert text == (
            "pct serve (pid 1, stdio)\nSessions: 0\n\n"
            "No session is open; `pct status` shows what a fresh one would get."
        )
        (agent_dir / "extensions" / "pi-codex-toolkit.json").write_text("{", encoding="utf-8")
        outcome = await runtime.reload()
        assert not outcome.ok
        assert runtime.live_status_text("pct serve (pid 1, stdio)") == (
            "pct serve (pid 1, stdio)\n"
            "Config error: invalid-json (line 1 column 2); using last known good settings.\n"
            "Sessions: 0\n\n"
            "No session is open; a new one would get this runtime's last known good settings "
            "(`pct status` reads the broken file as it is now)."
        )


async def test_live_status_of_a_runtime_started_on_a_broken_file(tmp_path: Path) -> None:
    agent = tmp_path / "agent"
    (agent / "extensions").mkdir(parents=True)
    (agent / "extensions" / "pi-codex-toolkit.json").write_text("[", encoding="utf-8")
    async with Runtime(agent_dir=agent, cwd=tmp_path) as runtime:
        assert runtime.live_status_text("pct") == (
            "pct\nConfig error: invalid-json (line 1 column 2); using all-off defaults.\n"
            "Sessions: 0\n\n"
            "No session is open; `pct status` shows what a fresh one would get."
        )
