"""The app-server client against a real fake `codex app-server` process (JSON lines)."""

from __future__ import annotations

import asyncio
import io
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from cu_helpers import CuTree, FakeUI, alive

from pct_runtime.capabilities.base import CallContext, ToolError
from pct_runtime.capabilities.computer_use import (
    ComputerUseClientError,
    ComputerUseProbe,
    create_computer_use_tools,
)
from pct_runtime.capabilities.computer_use.approval import APPROVAL_TITLE
from pct_runtime.debug import DebugSink
from pct_runtime.host.ui import Question

TEXTEDIT = "com.apple.TextEdit"


async def _until(condition: Callable[[], bool], limit: float = 10.0) -> None:
    """Poll a condition the fake makes true (bounded, so a broken fake fails the test)."""
    async with asyncio.timeout(limit):
        while not condition():  # noqa: ASYNC110 - the condition lives in another process
            await asyncio.sleep(0.02)


async def test_handshake_thread_and_lazy_start(cu_tree: CuTree, make_client: Any) -> None:
    cu_tree.scenario(starting_polls=2, paginate=True)
    client = make_client()
    assert cu_tree.records("spawn") == []  # constructing starts nothing
    result = await client.invoke("list_apps", {})
    assert "com.apple.TextEdit" in result.text

    [spawn] = cu_tree.records("spawn")
    assert spawn["argv"] == ["app-server"]
    home = Path(spawn["codex_home"])
    assert home.parent == cu_tree.root
    assert home.name.startswith("pct-computer-use-")
    assert spawn["cwd"] == str(home)

    methods = [m.get("method") for m in cu_tree.records("received")]
    assert methods[:3] == ["initialize", "initialized", "thread/start"]
    [init] = cu_tree.received("initialize")
    assert init["params"]["capabilities"]["experimentalApi"] is True
    assert init["params"]["capabilities"]["extensions"] == {"openai/form": {}}
    assert "id" not in cu_tree.received("initialized")[0]
    [start] = cu_tree.received("thread/start")
    params = start["params"]
    assert params["ephemeral"] is True
    assert params["cwd"] == str(home)
    assert params["approvalPolicy"]["granular"]["mcp_elicitations"] is True
    servers = params["config"]["mcp_servers"]
    assert list(servers) == ["node_repl"]
    node_repl = servers["node_repl"]
    assert node_repl["command"] == str(cu_tree.runtime.node_repl_path)
    assert node_repl["enabled_tools"] == ["js"]
    assert node_repl["env"]["SKY_CUA_SERVICE_PATH"] == str(cu_tree.runtime.helper_path)
    assert node_repl["env"]["CODEX_HOME"] == str(home)
    # polled through "starting" and through a second page before the tool call
    assert len(cu_tree.received("mcpServerStatus/list")) >= 3
    [call] = cu_tree.received("mcpServer/tool/call")
    assert call["params"]["threadId"] == "thr-fake-1"
    assert call["params"]["server"] == "node_repl"
    assert call["params"]["tool"] == "js"
    assert call["params"]["arguments"]["timeout_ms"] == 5000

    # reuse: a second call does not start another app-server
    await client.invoke("get_app_state", {"app": TEXTEDIT})
    assert len(cu_tree.records("spawn")) == 1
    assert client.is_running


async def test_each_tool_through_the_factory(cu_tree: CuTree, make_client: Any) -> None:
    cu_tree.scenario(screenshot="png")
    client = make_client(approval_mode="always")
    tools = {tool.spec.name: tool for tool in create_computer_use_tools(lambda ctx: client)}
    ctx = CallContext(cwd=Path("."), ui=FakeUI())
    expected = {
        "computer_use_list_apps": ({}, "TextEdit"),
        "computer_use_get_app_state": ({"app": "TextEdit", "disableDiff": True}, "App state"),
        "computer_use_click": ({"app": TEXTEDIT, "element_index": 3}, "Click completed."),
        "computer_use_type_text": ({"app": TEXTEDIT, "text": 'a "quote"\n'}, "Text entry"),
        "computer_use_press_key": ({"app": TEXTEDIT, "key": "cmd+s"}, "Key press completed."),
        "computer_use_scroll": ({"app": TEXTEDIT, "direction": "down", "pages": 2}, "Scroll"),
    }
    for name, (args, text) in expected.items():
        result = await tools[name](args, ctx)
        assert text in result.text, name
    calls = cu_tree.records("tool_call")
    assert [c["method"] for c in calls] == [
        "list_apps",
        "get_app_state",
        "click",
        "type_text",
        "press_key",
        "scroll",
    ]
    # the model's arguments arrive intact as data, never as code
    assert calls[3]["args"] == {"app": TEXTEDIT, "text": 'a "quote"\n'}
    assert calls[1]["args"] == {"app": "TextEdit", "disableDiff": True}
    state = await tools["computer_use_get_app_state"]({"app": "TextEdit"}, ctx)
    [image] = state.images
    assert image.mime_type == "image/png"
    assert image.data.startswith(b"\x89PNG")
    assert len(cu_tree.records("spawn")) == 1


@pytest.mark.parametrize(("kind", "mime"), [("jpeg", "image/jpeg"), ("none", None)])
async def test_screenshot_formats(cu_tree: CuTree, make_client: Any, kind: str, mime: Any) -> None:
    cu_tree.scenario(screenshot=kind)
    result = await make_client().invoke("get_app_state", {"app": TEXTEDIT})
    assert [i.mime_type for i in result.images] == ([mime] if mime else [])


@pytest.mark.parametrize("kind", ["gif", "mismatch"])
async def test_screenshot_not_png_or_jpeg_is_rejected(
    cu_tree: CuTree, make_client: Any, kind: str
) -> None:
    cu_tree.scenario(screenshot=kind)
    with pytest.raises(ComputerUseClientError) as caught:
        await make_client().invoke("get_app_state", {"app": TEXTEDIT})
    assert caught.value.code == "invalid-response"
    assert not caught.value.unknown_outcome  # reading state is not an action


async def test_action_timeout_is_not_retried_and_requires_inspection(
    cu_tree: CuTree, make_client: Any
) -> None:
    cu_tree.scenario(hang_on=["click"])
    client = make_client(tool_timeout=0.3, request_timeout=0.5)
    with pytest.raises(ComputerUseClientError) as caught:
        await client.invoke("click", {"app": TEXTEDIT, "element_index": 1})
    assert caught.value.code == "timeout"
    assert caught.value.unknown_outcome
    assert "computer_use_get_app_state" in caught.value.message
    assert "not retried" in caught.value.message
    assert len(cu_tree.records("tool_call")) == 1  # dispatched once, never again

    with pytest.raises(ComputerUseClientError) as blocked:
        await client.invoke("type_text", {"app": TEXTEDIT, "text": "x"})
    assert blocked.value.code == "inspection-required"
    assert len(cu_tree.records("tool_call")) == 1

    await client.invoke("get_app_state", {"app": TEXTEDIT})  # fresh transport
    assert len(cu_tree.records("spawn")) == 2
    result = await client.invoke("type_text", {"app": TEXTEDIT, "text": "x"})
    assert result.text == "Text entry completed."


async def test_read_timeout_has_no_unknown_outcome(cu_tree: CuTree, make_client: Any) -> None:
    cu_tree.scenario(hang_on=["list_apps"])
    client = make_client(request_timeout=0.3)
    with pytest.raises(ComputerUseClientError) as caught:
        await client.invoke("list_apps", {})
    assert caught.value.code == "timeout"
    assert not caught.value.unknown_outcome
    assert "get_app_state" not in caught.value.message


async def test_startup_stall_is_node_repl_unavailable(cu_tree: CuTree, make_client: Any) -> None:
    cu_tree.scenario(node_repl="never")
    client = make_client(startup_timeout=0.4)
    with pytest.raises(ComputerUseClientError) as caught:
        await client.invoke("list_apps", {})
    assert caught.value.code == "node-repl-unavailable"
    assert cu_tree.received("mcpServer/tool/call") == []


async def test_close_during_startup_leaves_nothing(cu_tree: CuTree, make_client: Any) -> None:
    cu_tree.scenario(hang_on_initialize=True, spawn_child=True)
    client = make_client()
    task = asyncio.create_task(client.invoke("list_apps", {}))
    await _until(lambda: bool(cu_tree.received("initialize")))
    await client.close()
    with pytest.raises(ComputerUseClientError) as caught:
        await task
    assert caught.value.code == "closed"
    [spawn] = cu_tree.records("spawn")
    assert not alive(spawn["pid"])
    assert not alive(spawn["child"])
    with pytest.raises(ComputerUseClientError):
        await client.invoke("list_apps", {})
    assert len(cu_tree.records("spawn")) == 1  # closed for good


async def test_failed_node_repl_is_unavailable(cu_tree: CuTree, make_client: Any) -> None:
    cu_tree.scenario(node_repl="failed")
    with pytest.raises(ComputerUseClientError) as caught:
        await make_client().invoke("list_apps", {})
    assert caught.value.code == "node-repl-unavailable"


async def test_app_server_exit_rejects_pending_request(cu_tree: CuTree, make_client: Any) -> None:
    cu_tree.scenario(exit_on=["press_key"])
    client = make_client()
    with pytest.raises(ComputerUseClientError) as caught:
        await client.invoke("press_key", {"app": TEXTEDIT, "key": "Return"})
    assert caught.value.code == "process-exit"
    assert caught.value.unknown_outcome
    assert "computer_use_get_app_state" in caught.value.message
    assert not client.is_running


async def test_broken_pipe_on_write(cu_tree: CuTree, make_client: Any) -> None:
    cu_tree.scenario(spawn_child=True)
    client = make_client()
    await client.invoke("list_apps", {})
    pid = client.process_id
    assert pid is not None
    # The peer vanishes between calls; the next write hits a closed pipe or EOF.
    import os
    import signal

    os.killpg(pid, signal.SIGKILL)
    with pytest.raises(ComputerUseClientError) as caught:
        await client.invoke("scroll", {"app": TEXTEDIT, "direction": "up"})
    assert caught.value.code in ("process-exit", "closed")
    # A read after the failure starts a fresh app-server.
    await client.invoke("list_apps", {})
    assert len(cu_tree.records("spawn")) == 2


async def test_epipe_while_the_peer_is_still_alive(cu_tree: CuTree, make_client: Any) -> None:
    cu_tree.scenario(close_stdin_after="list_apps")
    client = make_client()
    await client.invoke("list_apps", {})
    with pytest.raises(ComputerUseClientError) as caught:
        await client.invoke("click", {"app": TEXTEDIT, "element_index": 4})
    assert caught.value.code == "process-exit"
    assert caught.value.unknown_outcome  # written (maybe partly) before the pipe broke
    assert len(cu_tree.records("tool_call")) == 1
    assert not client.is_running


async def test_cancel_during_confirmation(cu_tree: CuTree, make_client: Any) -> None:
    cu_tree.scenario(elicit={"click": [{"app": TEXTEDIT}]})
    client = make_client()
    ui = FakeUI(answers=[True], block=asyncio.Event())
    task = asyncio.create_task(client.invoke("click", {"app": TEXTEDIT, "element_index": 1}, ui=ui))
    await _until(lambda: bool(ui.asked))
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert client.approved_apps == frozenset()
    assert not client.is_running


async def test_garbage_line_fails_the_transport(cu_tree: CuTree, make_client: Any) -> None:
    cu_tree.scenario(garbage_on=["click"])
    with pytest.raises(ComputerUseClientError) as caught:
        await make_client().invoke("click", {"app": TEXTEDIT, "x": 1, "y": 2})
    assert caught.value.code == "invalid-response"
    assert caught.value.unknown_outcome


async def test_mcp_error_and_rpc_error(cu_tree: CuTree, make_client: Any) -> None:
    cu_tree.scenario(error_on=["get_app_state"], rpc_error_on=["list_apps"])
    client = make_client()
    with pytest.raises(ComputerUseClientError) as caught:
        await client.invoke("get_app_state", {"app": "Nope"})
    assert caught.value.code == "mcp-error"
    assert 'App "Nope" was not found' in caught.value.message
    assert "computer_use_list_apps" in caught.value.message
    with pytest.raises(ComputerUseClientError) as rpc:
        await client.invoke("list_apps", {})
    assert rpc.value.code == "app-server-error"
    assert "thread not found" in rpc.value.message


async def test_unsupported_server_request_is_answered_with_an_error(
    cu_tree: CuTree, make_client: Any
) -> None:
    cu_tree.scenario(foreign_request_on="list_apps")
    client = make_client()
    await client.invoke("list_apps", {})
    await client.invoke("list_apps", {})  # the fake has read everything sent before this
    replies = [m for m in cu_tree.records("received") if m.get("id") == "foreign-1"]
    assert replies
    assert replies[0]["error"]["code"] == -32601


async def test_cancellation_after_dispatch_kills_transport(
    cu_tree: CuTree, make_client: Any
) -> None:
    cu_tree.scenario(hang_on=["click"])
    client = make_client()
    task = asyncio.create_task(client.invoke("click", {"app": TEXTEDIT, "element_index": 0}))
    await _until(lambda: bool(cu_tree.records("tool_call")))
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    with pytest.raises(ComputerUseClientError) as caught:
        await client.invoke("click", {"app": TEXTEDIT, "element_index": 0})
    assert caught.value.code == "inspection-required"


# ------------------------------------------------------------------ approvals


def _replies(tree: CuTree) -> list[dict[str, Any]]:
    return [r["result"] for r in tree.records("elicitation_reply")]


async def test_confirm_yes_is_remembered_per_app_and_reused(
    cu_tree: CuTree, make_client: Any
) -> None:
    cu_tree.scenario(elicit={"click": [{"app": TEXTEDIT, "message": "Allow TextEdit?"}]})
    client = make_client(approval_mode="confirm")
    ui = FakeUI(answers=[True])
    result = await client.invoke("click", {"app": TEXTEDIT, "element_index": 1}, ui=ui)
    assert result.text == "Click completed."
    assert ui.asked == [(APPROVAL_TITLE, "Allow TextEdit?")]
    assert _replies(cu_tree)[0] == {
        "action": "accept",
        "content": {},
        "_meta": {"persist": "session"},
    }
    assert client.approved_apps == {TEXTEDIT}

    await client.invoke("click", {"app": TEXTEDIT, "element_index": 2}, ui=ui)
    assert len(ui.asked) == 1  # reused: not asked again
    assert _replies(cu_tree)[1]["action"] == "accept"


async def test_confirm_no_is_never_cached(cu_tree: CuTree, make_client: Any) -> None:
    cu_tree.scenario(elicit={"type_text": [{"app": TEXTEDIT}]})
    client = make_client()
    ui = FakeUI(answers=[False, True])
    with pytest.raises(ToolError) as caught:
        await client.invoke("type_text", {"app": TEXTEDIT, "text": "hi"}, ui=ui)
    assert caught.value.code == "approval-declined"
    assert TEXTEDIT in caught.value.message
    assert "Nothing was done" in caught.value.message
    assert _replies(cu_tree)[0] == {"action": "decline", "content": None, "_meta": None}
    assert client.approved_apps == frozenset()
    # declined: nothing ran, so no inspection gate; the same app is asked again
    result = await client.invoke("type_text", {"app": TEXTEDIT, "text": "hi"}, ui=ui)
    assert result.text == "Text entry completed."
    assert len(ui.asked) == 2


async def test_confirm_without_ui_declines(cu_tree: CuTree, make_client: Any) -> None:
    cu_tree.scenario(elicit={"click": [{"app": TEXTEDIT}]})
    ui = FakeUI(available_flag=False)
    with pytest.raises(ToolError) as caught:
        await make_client().invoke("click", {"app": TEXTEDIT, "element_index": 1}, ui=ui)
    assert caught.value.code == "approval-unavailable"
    assert ui.asked == []


async def test_a_failing_ui_is_a_no(cu_tree: CuTree, make_client: Any) -> None:
    class BrokenUI(FakeUI):
        async def confirm(self, question: Question) -> bool:
            self.asked.append((question.title, question.message))
            raise RuntimeError("dialog crashed")

    cu_tree.scenario(elicit={"click": [{"app": TEXTEDIT}]})
    client = make_client()
    ui = BrokenUI()
    with pytest.raises(ComputerUseClientError):
        await client.invoke("click", {"app": TEXTEDIT, "element_index": 1}, ui=ui)
    assert len(ui.asked) == 1
    assert _replies(cu_tree) == [{"action": "decline", "content": None, "_meta": None}]
    assert client.approved_apps == frozenset()


async def test_reset_forgets_approvals(cu_tree: CuTree, make_client: Any) -> None:
    cu_tree.scenario(elicit={"click": [{"app": TEXTEDIT}]})
    client = make_client()
    ui = FakeUI(answers=[True, True])
    await client.invoke("click", {"app": TEXTEDIT, "element_index": 1}, ui=ui)
    await client.reset()
    assert client.approved_apps == frozenset()
    assert not client.is_running
    await client.invoke("click", {"app": TEXTEDIT, "element_index": 1}, ui=ui)
    assert len(ui.asked) == 2
    assert len(cu_tree.records("spawn")) == 2


async def test_always_accepts_without_asking_and_mode_change_resets(
    cu_tree: CuTree, make_client: Any
) -> None:
    cu_tree.scenario(elicit={"scroll": [{"app": TEXTEDIT}]})
    client = make_client(approval_mode="always")
    ui = FakeUI()
    await client.invoke("scroll", {"app": TEXTEDIT, "direction": "d"}, ui=ui)
    assert ui.asked == []
    assert _replies(cu_tree)[0] == {
        "action": "accept",
        "content": {},
        "_meta": {"persist": "session"},
    }
    await client.set_approval_mode("confirm")  # Always → Confirm asks again
    ui.answers = [True]
    await client.invoke("scroll", {"app": TEXTEDIT, "direction": "d"}, ui=ui)
    assert len(ui.asked) == 1


@pytest.mark.parametrize(
    "spec",
    [
        {"threadId": "some-other-thread"},
        {"serverName": "computer-use"},
        {"mode": "url"},
        {"connector_id": "other-connector"},
        {"app": "   "},
        {"app": ""},
        {"raw_params": {"threadId": "thr-fake-1", "serverName": "node_repl", "mode": "form"}},
        {"raw_params": "not an object"},
    ],
    ids=["thread", "server", "url-mode", "connector", "blank-app", "empty-app", "no-meta", "str"],
)
@pytest.mark.parametrize("mode", ["confirm", "always"])
async def test_foreign_or_malformed_elicitations_are_declined(
    cu_tree: CuTree, make_client: Any, spec: dict[str, Any], mode: str
) -> None:
    cu_tree.scenario(elicit={"click": [{"app": TEXTEDIT, **spec}]})
    ui = FakeUI(answers=[True])
    with pytest.raises(ComputerUseClientError):
        await make_client(approval_mode=mode).invoke(
            "click", {"app": TEXTEDIT, "element_index": 1}, ui=ui
        )
    assert ui.asked == []
    assert _replies(cu_tree) == [{"action": "decline", "content": None, "_meta": None}]


async def test_confirmation_pauses_the_outer_budget(cu_tree: CuTree, make_client: Any) -> None:
    cu_tree.scenario(elicit={"click": [{"app": TEXTEDIT}]})
    client = make_client(request_timeout=0.4)
    gate = asyncio.Event()
    ui = FakeUI(answers=[True], block=gate)
    task = asyncio.create_task(client.invoke("click", {"app": TEXTEDIT, "element_index": 1}, ui=ui))
    await _until(lambda: bool(ui.asked))
    await asyncio.sleep(0.8)  # twice the request budget spent in the dialog
    assert not task.done()
    gate.set()
    result = await task
    assert result.text == "Click completed."


async def test_debug_records_carry_no_payload(cu_tree: CuTree, make_client: Any) -> None:
    stream = io.StringIO()
    cu_tree.scenario(error_on=["type_text"])
    client = make_client(debug=DebugSink(True, stream=stream), approval_mode="always")
    await client.invoke("get_app_state", {"app": TEXTEDIT})
    with pytest.raises(ComputerUseClientError):
        await client.invoke("type_text", {"app": TEXTEDIT, "text": "secret words"})
    records = [json.loads(line) for line in stream.getvalue().splitlines()]
    assert [r["feature"] for r in records] == ["computer-use", "computer-use"]
    assert records[0]["contentBlocks"] == {"text": 1, "image": 1}
    assert records[1]["errorCategory"] == "mcp-error"
    assert "secret" not in stream.getvalue()
    assert TEXTEDIT not in stream.getvalue()


async def test_factory_inactive_text(cu_tree: CuTree) -> None:
    [list_apps, *_] = create_computer_use_tools(lambda ctx: None)
    with pytest.raises(ToolError) as caught:
        await list_apps({}, CallContext(cwd=Path(".")))
    assert caught.value.message == "Computer Use is not active for the current session."
    assert cu_tree.records("spawn") == []


# ------------------------------------------------------------------ status probe


async def test_status_probe_mac(cu_tree: CuTree, make_client: Any) -> None:
    cu_tree.scenario(sky_target="mac", spawn_child=True)
    probe = ComputerUseProbe(
        resources_path=cu_tree.resources,
        codex_home=cu_tree.codex_home,
        client_factory=lambda runtime: make_client(),
    )
    assert await probe.probe() is None
    [call] = cu_tree.records("tool_call")
    assert call["method"] == "probe"  # only the target check: no list, no state, no action
    assert call["arguments"]["timeout_ms"] == 5000


async def test_status_probe_other_target(cu_tree: CuTree, make_client: Any) -> None:
    cu_tree.scenario(sky_target="linux")
    probe = ComputerUseProbe(
        resources_path=cu_tree.resources,
        codex_home=cu_tree.codex_home,
        client_factory=lambda runtime: make_client(),
    )
    assert await probe.probe() == "incompatible-sky-target"


async def test_status_probe_node_repl_failure(cu_tree: CuTree, make_client: Any) -> None:
    cu_tree.scenario(node_repl="failed")
    probe = ComputerUseProbe(
        resources_path=cu_tree.resources,
        codex_home=cu_tree.codex_home,
        client_factory=lambda runtime: make_client(),
    )
    assert await probe.probe() == "node-repl-unavailable"


async def test_status_probe_default_client_closes_everything(cu_tree: CuTree) -> None:
    cu_tree.scenario(spawn_child=True)
    probe = ComputerUseProbe(
        resources_path=cu_tree.resources, codex_home=cu_tree.codex_home, env=cu_tree.env()
    )
    assert await probe.probe() is None
    [spawn] = cu_tree.records("spawn")

    assert not alive(spawn["pid"])
    assert not alive(spawn["child"])
    assert not await asyncio.to_thread(Path(spawn["codex_home"]).exists)
    assert json.loads(cu_tree.scenario_path.read_text()) == {"spawn_child": True}
