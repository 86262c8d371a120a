"""The MCP server in-process: real `mcp.Client` over memory streams against a real Runtime."""

from __future__ import annotations

import asyncio
import base64
import json
from pathlib import Path
from typing import Any

import mcp_types as types
import pytest
from mcp import Client
from serve_doubles import Approve, Boom, ConsoleUI, Echo, FakeApplyPatch, Picture, Slow

from pct_runtime.runtime import CapabilityBinding, Runtime
from pct_runtime.serve.mcp.server import PctMCPServer


def write_config(agent_dir: Path, obj: Any) -> None:
    path = agent_dir / "extensions" / "pi-codex-toolkit.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(obj), encoding="utf-8")


@pytest.fixture
def agent_dir(tmp_path: Path) -> Path:
    d = tmp_path / "agent"
    d.mkdir()
    return d


async def make(
    agent_dir: Path, *tools: Any, heartbeat: float = 5.0, **kw: Any
) -> tuple[Runtime, PctMCPServer]:
    runtime = Runtime(agent_dir=agent_dir, extra_tools=list(tools), cwd=agent_dir, **kw)
    await runtime.start()
    return runtime, PctMCPServer(runtime, heartbeat_seconds=heartbeat)


def text_of(result: types.CallToolResult) -> str:
    block = result.content[0]
    assert isinstance(block, types.TextContent)
    return block.text


async def test_list_tools_is_the_projection_and_advertises_list_changed(agent_dir: Path) -> None:
    runtime, server = await make(agent_dir, Echo(), Picture())
    async with Client(server.server, mode="legacy") as client:
        assert client.server_capabilities is not None
        assert client.server_capabilities.tools is not None
        assert client.server_capabilities.tools.list_changed is True
        listed = await client.list_tools()
        assert [t.name for t in listed.tools] == ["echo", "picture"]
        echo = listed.tools[0]
        assert echo.title == "Echo"
        assert echo.description == "Echo the text back."
        assert echo.input_schema["properties"] == {"text": {"type": "string"}}
    await runtime.aclose()


async def test_results_map_text_details_images_and_errors(agent_dir: Path) -> None:
    runtime, server = await make(agent_dir, Echo(), Picture(), Boom())
    async with Client(server.server, mode="legacy") as client:
        ok = await client.call_tool("echo", {"text": "hello"})
        assert not ok.is_error
        assert text_of(ok) == "hello"
        # The model reads the text; the details travel in `_meta`, never as structured content.
        assert ok.structured_content is None
        assert ok.meta == {"pct/details": {"length": 5}}

        pic = await client.call_tool("picture", {})
        image = pic.content[1]
        assert isinstance(image, types.ImageContent)
        assert base64.b64decode(image.data) == Picture.PNG
        assert image.mime_type == "image/png"

        bad = await client.call_tool("echo", {"text": 3})
        assert bad.is_error
        assert text_of(bad) == "echo requires a string `text`."
        assert bad.structured_content is None
        assert bad.meta == {"pct/error": {"code": "invalid-arguments"}}

        crash = await client.call_tool("boom", {})
        assert crash.is_error
        assert text_of(crash) == "boom failed unexpectedly: RuntimeError: kaput"

        # the server keeps serving after every failure
        assert text_of(await client.call_tool("echo", {"text": "still here"})) == "still here"
    await runtime.aclose()


async def test_structured_content_only_when_opted_in(agent_dir: Path) -> None:
    runtime = Runtime(agent_dir=agent_dir, extra_tools=[Echo()], cwd=agent_dir)
    await runtime.start()
    server = PctMCPServer(runtime, structured_content=True)
    async with Client(server.server, mode="legacy") as client:
        listed = await client.list_tools()
        # No tool advertises an output schema, so no client may demand structured content.
        assert all(tool.output_schema is None for tool in listed.tools)
        ok = await client.call_tool("echo", {"text": "hello"})
        assert text_of(ok) == "hello"
        assert ok.structured_content == {"length": 5}
        assert ok.meta == {"pct/details": {"length": 5}}
    await runtime.aclose()


def test_serve_help_names_the_structured_content_opt_in(
    capsys: pytest.CaptureFixture[str],
) -> None:
    from pct_runtime.cli import build_parser, main

    with pytest.raises(SystemExit):
        main(["serve", "--help"])
    assert "--structured-content" in capsys.readouterr().out
    parser = build_parser()
    assert parser.parse_args(["serve"]).structured_content is False
    assert parser.parse_args(["serve", "--structured-content"]).structured_content is True


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("apply_patch", "Apply Patch is not enabled."),
        ("exec_command", "Shell Sessions are not enabled."),
        ("write_stdin", "Shell Sessions are not enabled."),
        ("exec", "Code Mode is not enabled."),
        ("wait", "Code Mode is not enabled."),
        ("find_tools", "Tool discovery is not enabled."),
        ("computer_use_click", "Computer Use is not active for the current session."),
    ],
)
async def test_known_inactive_names_get_their_capability_error(
    agent_dir: Path, name: str, message: str
) -> None:
    runtime, server = await make(agent_dir)
    async with Client(server.server, mode="legacy") as client:
        result = await client.call_tool(name, {})
        assert result.is_error
        assert text_of(result) == message
    await runtime.aclose()


async def test_unknown_tool_is_a_clear_error(agent_dir: Path) -> None:
    runtime, server = await make(agent_dir, Echo())
    async with Client(server.server, mode="legacy") as client:
        result = await client.call_tool("no_such_tool", {"x": 1})
        assert result.is_error
        assert text_of(result) == (
            "Unknown tool: no_such_tool. Call one of the tools this server lists (tools/list)."
        )
    await runtime.aclose()


async def test_progress_forwards_records_and_heartbeats(agent_dir: Path) -> None:
    slow = Slow()
    runtime, server = await make(agent_dir, slow, heartbeat=0.05)
    seen: list[tuple[float, str | None]] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        seen.append((progress, message))
        if sum(1 for _, m in seen if m == "running") >= 2:
            slow.release.set()

    async with Client(server.server, mode="legacy") as client:
        result = await client.call_tool("slow", {}, progress_callback=on_progress)
        assert text_of(result) == "released"
    messages = [m for _, m in seen]
    assert messages[:2] == ['{"phase":"start","n":1}', '{"phase":"middle","n":2}']
    assert messages.count("running") >= 2
    progress_values = [p for p, _ in seen]
    assert progress_values == sorted(progress_values)
    assert len(set(progress_values)) == len(seen)
    await runtime.aclose()


async def test_cancellation_reaches_the_executor(agent_dir: Path) -> None:
    slow = Slow()
    runtime, server = await make(agent_dir, slow, Echo())
    async with Client(server.server, mode="legacy") as client:
        with pytest.raises(Exception):  # noqa: B017, PT011 - the client reports its own timeout
            await client.call_tool("slow", {}, read_timeout_seconds=0.3)
        await asyncio.wait_for(slow.cancelled.wait(), 5)
        assert text_of(await client.call_tool("echo", {"text": "after"})) == "after"
    await runtime.aclose()


async def test_list_changed_on_reload_and_the_new_tool_is_callable(agent_dir: Path) -> None:
    patch = FakeApplyPatch()
    binding = CapabilityBinding("apply_patch", ("apply_patch",), lambda services: [patch])
    runtime, server = await make(agent_dir, bindings=[binding])
    changed = asyncio.Event()

    async def on_message(message: Any) -> None:
        if isinstance(message, types.ToolListChangedNotification):
            changed.set()

    async with Client(server.server, mode="legacy", message_handler=on_message) as client:
        assert [t.name for t in (await client.list_tools()).tools] == []
        assert (
            text_of(await client.call_tool("apply_patch", {"patch": "x"}))
            == "Apply Patch is not enabled."
        )
        write_config(agent_dir, {"applyPatch": {"enabled": True}})
        outcome = await runtime.reload()
        assert outcome.ok
        assert outcome.message == "Pi Codex Toolkit configuration reloaded."
        await asyncio.wait_for(changed.wait(), 5)
        assert [t.name for t in (await client.list_tools()).tools] == ["apply_patch"]
        result = await client.call_tool("apply_patch", {"patch": "x"})
        assert not result.is_error
        assert text_of(result).startswith("Applied patch:")
    await runtime.aclose()


async def test_broken_config_keeps_last_known_good(agent_dir: Path) -> None:
    patch = FakeApplyPatch()
    binding = CapabilityBinding("apply_patch", ("apply_patch",), lambda services: [patch])
    write_config(agent_dir, {"applyPatch": {"enabled": True}})
    runtime, server = await make(agent_dir, bindings=[binding])
    async with Client(server.server, mode="legacy") as client:
        assert [t.name for t in (await client.list_tools()).tools] == ["apply_patch"]
        write_config(agent_dir, {"applyPatch": {"enabled": "yes"}})
        outcome = await runtime.reload()
        assert not outcome.ok
        assert outcome.message == (
            "Pi Codex Toolkit config error: invalid-config (applyPatch.enabled must be true or "
            "false); using last known good settings."
        )
        assert [t.name for t in (await client.list_tools()).tools] == ["apply_patch"]
    await runtime.aclose()


async def test_elicitation_approves_and_declines(agent_dir: Path) -> None:
    runtime, server = await make(agent_dir, Approve())
    asked: list[str] = []

    def answer(action: str, content: dict[str, Any] | None) -> Any:
        async def callback(context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
            asked.append(params.message)
            return types.ElicitResult(action=action, content=content)  # type: ignore[arg-type]

        return callback

    async with Client(
        server.server, mode="legacy", elicitation_callback=answer("accept", {"approve": True})
    ) as client:
        assert text_of(await client.call_tool("approve", {})) == "approved"
    assert asked
    assert asked[0].startswith("Allow the test change?")
    async with Client(
        server.server, mode="legacy", elicitation_callback=answer("decline", None)
    ) as client:
        assert text_of(await client.call_tool("approve", {})) == "denied"
    async with Client(
        server.server, mode="legacy", elicitation_callback=answer("accept", {"approve": False})
    ) as client:
        assert text_of(await client.call_tool("approve", {})) == "denied"
    await runtime.aclose()


async def test_without_elicitation_or_console_approval_is_unavailable(agent_dir: Path) -> None:
    runtime, server = await make(agent_dir, Approve())
    async with Client(server.server, mode="legacy") as client:
        result = await client.call_tool("approve", {})
        assert result.is_error
        assert result.meta == {"pct/error": {"code": "approval-unavailable"}}
    await runtime.aclose()


async def test_console_answers_before_elicitation(agent_dir: Path) -> None:
    runtime, server = await make(agent_dir, Approve())
    console = ConsoleUI(answer=True)
    detach = runtime.attach_ui(console)

    async def never(context: Any, params: Any) -> types.ElicitResult:
        raise AssertionError("elicitation must not be used while a console is attached")

    async with Client(server.server, mode="legacy", elicitation_callback=never) as client:
        assert text_of(await client.call_tool("approve", {})) == "approved"
    assert console.asked == ["Allow the test change?"]
    detach()
    assert runtime.console_ui is None
    await runtime.aclose()


async def test_one_session_per_connection_closed_at_disconnect(agent_dir: Path) -> None:
    closed: list[str] = []

    def build(services: Any) -> list[Any]:
        async def closer() -> None:
            closed.append(services.session_id)

        services.on_close(closer)
        return []

    binding = CapabilityBinding("probe", (), build)
    runtime, server = await make(agent_dir, Echo(), bindings=[binding])
    async with Client(server.server, mode="legacy") as a, Client(server.server, mode="legacy") as b:
        await a.call_tool("echo", {"text": "a"})
        await b.call_tool("echo", {"text": "b"})
        ids = {s.id for s in runtime.sessions}
        assert len(ids) == 2
        assert closed == []
    assert runtime.sessions == []
    assert set(closed) == ids
    await runtime.aclose()


async def test_modern_era_requests_share_one_session(agent_dir: Path) -> None:
    runtime, server = await make(agent_dir, Echo())
    async with Client(server.server) as client:  # mode="auto" lands on 2026-07-28 in memory
        assert text_of(await client.call_tool("echo", {"text": "modern"})) == "modern"
        assert [t.name for t in (await client.list_tools()).tools] == ["echo"]
    assert len(runtime.sessions) == 1
    await server.aclose()
    assert runtime.sessions == []
    await runtime.aclose()


async def test_session_port_asks_on_the_connection_between_calls(agent_dir: Path) -> None:
    runtime, server = await make(agent_dir, Approve(), Echo())

    async def accept(context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        return types.ElicitResult(action="accept", content={"approve": True})

    async with Client(server.server, mode="legacy", elicitation_callback=accept) as client:
        await client.call_tool("echo", {"text": "bind the session"})
        [session] = runtime.sessions
        assert session.ui.available
        # a call that did not come in over MCP (e.g. the console) uses the session's port
        result = await session.call("approve", {})
        assert result.text == "approved"
    await runtime.aclose()


async def test_modern_era_hears_list_changed_on_subscriptions_listen(agent_dir: Path) -> None:
    patch = FakeApplyPatch()
    binding = CapabilityBinding("apply_patch", ("apply_patch",), lambda services: [patch])
    runtime, server = await make(agent_dir, bindings=[binding])
    async with Client(server.server) as client:
        assert [t.name for t in (await client.list_tools()).tools] == []
        async with client.listen(tools_list_changed=True) as subscription:
            write_config(agent_dir, {"applyPatch": {"enabled": True}})
            assert (await runtime.reload()).ok
            event = await asyncio.wait_for(subscription.__anext__(), 5)
            assert type(event).__name__ == "ToolsListChanged"
        names = [t.name for t in (await client.list_tools(cache_mode="bypass")).tools]
        assert names == ["apply_patch"]
    await server.aclose()
    await runtime.aclose()
