"""Schemas, argument and app-target rules, fixed templates and content conversion (no process)."""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import pytest
from cu_helpers import FakeUI

from pct_runtime.capabilities.base import CallContext, ToolError, ToolResult
from pct_runtime.capabilities.computer_use import (
    COMPUTER_USE_TOOL_NAMES,
    create_computer_use_tools,
    validate_arguments,
    validate_elicitation,
)
from pct_runtime.capabilities.computer_use.approval import (
    ACCEPT_FRESH,
    ACCEPT_REMEMBERED,
    DECLINE,
    ApprovalMemory,
    decide_elicitation,
)
from pct_runtime.capabilities.computer_use.templates import (
    ContentError,
    build_javascript,
    convert_content,
)


def test_group_names_order_and_shape() -> None:
    tools = create_computer_use_tools(lambda ctx: None)
    assert tuple(t.spec.name for t in tools) == COMPUTER_USE_TOOL_NAMES
    assert COMPUTER_USE_TOOL_NAMES == (
        "computer_use_list_apps",
        "computer_use_get_app_state",
        "computer_use_click",
        "computer_use_type_text",
        "computer_use_press_key",
        "computer_use_scroll",
    )
    for tool in tools:
        schema = tool.spec.input_schema
        assert tool.spec.sequential is True
        assert schema["type"] == "object"
        assert schema["additionalProperties"] is False
        assert tool.spec.description
        assert tool.spec.label.startswith("Computer Use: ")
    by_name = {t.spec.name: t.spec.input_schema for t in tools}
    assert by_name["computer_use_list_apps"]["properties"] == {}
    assert by_name["computer_use_get_app_state"]["required"] == ["app"]
    assert by_name["computer_use_type_text"]["required"] == ["app", "text"]
    assert by_name["computer_use_press_key"]["required"] == ["app", "key"]
    assert by_name["computer_use_scroll"]["required"] == ["app", "direction"]
    click = by_name["computer_use_click"]["properties"]
    assert click["mouse_button"]["enum"] == ["left", "right", "middle", "l", "r", "m"]
    assert click["click_count"] == {"type": "integer", "minimum": 1}
    scroll = by_name["computer_use_scroll"]["properties"]
    assert scroll["direction"]["enum"] == ["up", "down", "left", "right", "u", "d", "l", "r"]
    assert scroll["pages"] == {"type": "number", "exclusiveMinimum": 0}


@pytest.mark.parametrize(
    "app",
    [
        "TextEdit",
        "Visual Studio Code",
        "com.apple.TextEdit",
        "/Applications/TextEdit.app",
        "/Applications/TextEdit.app/",
    ],
)
def test_accepted_app_targets(app: str) -> None:
    out = validate_arguments("get_app_state", {"app": f"  {app} "})
    assert out["app"] == app.strip().rstrip("/")


def test_home_relative_bundle_path_is_expanded() -> None:
    out = validate_arguments("get_app_state", {"app": "~/Applications/My Tool.app"})
    assert out["app"] == str(Path.home() / "Applications" / "My Tool.app")


@pytest.mark.parametrize(
    ("app", "word"),
    [
        ("1234", "PID"),
        ("pid:1234", "PID"),
        ("PID 99", "PID"),
        ("window:42", "window id"),
        ("window_id=0x1f", "window id"),
        ("wid 7", "window id"),
        ("/Applications/TextEdit.app/Contents/MacOS/TextEdit", "bare executable"),
        ("/usr/local/bin/mytool", "bare executable"),
        ("./build/app", "relative path"),
        ("../Tools/My.app", "relative path"),
    ],
)
def test_rejected_app_targets(app: str, word: str) -> None:
    with pytest.raises(ToolError) as caught:
        validate_arguments("click", {"app": app, "element_index": 1})
    assert caught.value.code == "invalid-arguments"
    assert word in caught.value.message
    assert "computer_use_list_apps" in caught.value.message


@pytest.mark.parametrize(
    ("method", "args", "fragment"),
    [
        ("list_apps", {"app": "x"}, "unknown argument `app`"),
        ("get_app_state", {}, "`app` is required"),
        ("get_app_state", {"app": ""}, "non-empty string"),
        ("get_app_state", {"app": 3}, "non-empty string"),
        ("get_app_state", {"app": "A", "disableDiff": "yes"}, "true or false"),
        ("click", {"app": "A"}, "element_index"),
        ("click", {"app": "A", "x": 1}, "`x` and `y` together"),
        ("click", {"app": "A", "element_index": True}, "integer"),
        ("click", {"app": "A", "element_index": 1.5}, "integer"),
        ("click", {"app": "A", "element_index": 1, "click_count": 0}, "at least 1"),
        ("click", {"app": "A", "element_index": 1, "mouse_button": "left2"}, "one of"),
        ("click", {"app": "A", "x": float("nan"), "y": 1}, "finite"),
        ("click", {"app": "A", "pid": 1, "element_index": 1}, "unknown argument `pid`"),
        ("type_text", {"app": "A", "text": ""}, "non-empty"),
        ("press_key", {"app": "A"}, "`key` is required"),
        ("scroll", {"app": "A"}, "`direction` is required"),
        ("scroll", {"app": "A", "direction": "sideways"}, "one of"),
        ("scroll", {"app": "A", "direction": "up", "pages": 0}, "greater than 0"),
    ],
)
def test_argument_errors(method: Any, args: dict[str, Any], fragment: str) -> None:
    with pytest.raises(ToolError) as caught:
        validate_arguments(method, args)
    assert fragment in caught.value.message
    assert caught.value.message.startswith("computer_use_")


def test_validated_arguments_keep_only_known_fields() -> None:
    out = validate_arguments(
        "click",
        {"app": "A", "x": 10, "y": 20.5, "mouse_button": "r", "click_count": 2.0},
    )
    assert out == {"app": "A", "x": 10, "y": 20.5, "mouse_button": "r", "click_count": 2}


@pytest.mark.parametrize(
    "text",
    ['"); process.exit(1); ("', "line\nbreak", "\u2028sep\u2029", "`${globalThis}`", "</script>"],
)
def test_templates_embed_arguments_as_one_json_literal(text: str) -> None:
    args = {"app": "com.apple.TextEdit", "text": text}
    code = build_javascript("type_text", args)
    lines = code.splitlines()
    [literal] = [line.strip() for line in lines if line.strip().startswith("const args = ")]
    assert json.loads(literal[len("const args = ") : -1]) == args
    assert literal.isascii()
    # the code is the template: with the literal masked, every input gives the same text
    assert _masked(code) == _masked(build_javascript("type_text", {"app": "x", "text": "y"}))
    assert "sky.type_text(args)" in code


def _masked(code: str) -> str:
    return "\n".join(
        "ARGS" if line.strip().startswith("const args = ") else line for line in code.splitlines()
    )


def test_each_template_calls_its_sky_method() -> None:
    for method in ("get_app_state", "click", "type_text", "press_key", "scroll"):
        assert f"sky.{method}(args)" in build_javascript(method, {"app": "A"})  # type: ignore[arg-type]
    assert "sky.list_apps()" in build_javascript("list_apps", {})


PNG = b"\x89PNG\r\n\x1a\n0000"
JPEG = b"\xff\xd8\xff\xe00000"


def _image(data: bytes, mime: str) -> dict[str, Any]:
    return {"type": "image", "data": base64.b64encode(data).decode(), "mimeType": mime}


def test_convert_content_accepts_text_png_jpeg() -> None:
    texts, images = convert_content(
        [{"type": "text", "text": "t"}, _image(PNG, "image/png"), _image(JPEG, "image/jpeg")]
    )
    assert texts == ["t"]
    assert [(i.mime_type, i.data) for i in images] == [("image/png", PNG), ("image/jpeg", JPEG)]


@pytest.mark.parametrize(
    "blocks",
    [
        [],
        None,
        [{"type": "audio", "data": "AA=="}],
        [_image(b"GIF89a000", "image/gif")],
        [_image(b"GIF89a000", "image/png")],
        [_image(JPEG, "image/png")],
        [{"type": "image", "data": "***", "mimeType": "image/png"}],
        ["text"],
    ],
)
def test_convert_content_rejects_everything_else(blocks: Any) -> None:
    with pytest.raises(ContentError):
        convert_content(blocks)


# ------------------------------------------------------------------ approval units

GOOD = {
    "threadId": "t1",
    "serverName": "node_repl",
    "mode": "form",
    "message": "Allow?",
    "_meta": {"connector_id": "computer-use", "tool_params": {"app": " com.apple.Notes "}},
}


def test_validate_elicitation() -> None:
    valid = validate_elicitation(GOOD, thread_id="t1")
    assert valid is not None
    assert valid.app == "com.apple.Notes"
    assert validate_elicitation({**GOOD, "mode": "openai/form"}, thread_id="t1") is not None
    assert validate_elicitation(GOOD, thread_id="t2") is None
    assert validate_elicitation(GOOD, thread_id=None) is None
    assert validate_elicitation({**GOOD, "message": None}, thread_id="t1") is None
    meta = {"connector_id": "computer-use", "tool_params": {"app": 5}}
    assert validate_elicitation({**GOOD, "_meta": meta}, thread_id="t1") is None


async def test_decide_elicitation_modes() -> None:
    memory = ApprovalMemory()
    valid = validate_elicitation(GOOD, thread_id="t1")
    ui = FakeUI(answers=[True])
    outcome = await decide_elicitation(valid, mode="confirm", memory=memory, ui=ui)
    assert outcome.reply == ACCEPT_FRESH
    assert outcome.remember
    assert ui.asked == [("Computer Use access", "Allow?")]
    memory.remember("com.apple.Notes")
    again = await decide_elicitation(valid, mode="confirm", memory=memory, ui=ui)
    assert again.reply == ACCEPT_REMEMBERED
    assert len(ui.asked) == 1
    assert (await decide_elicitation(None, mode="always", memory=memory, ui=ui)).reply == DECLINE
    fresh = ApprovalMemory()
    always = await decide_elicitation(valid, mode="always", memory=fresh, ui=None)
    assert always.reply == ACCEPT_FRESH


async def test_tool_passes_only_validated_arguments(tmp_path: Path) -> None:
    calls: list[tuple[str, dict[str, Any]]] = []

    class Recorder:
        async def invoke(self, method: Any, args: Any, *, ui: Any = None) -> ToolResult:
            calls.append((method, dict(args)))
            return ToolResult(text="ok")

    async def provider(ctx: CallContext) -> Recorder:  # an async provider works too
        return Recorder()

    tools = {t.spec.name: t for t in create_computer_use_tools(provider)}
    ctx = CallContext(cwd=tmp_path)
    result = await tools["computer_use_press_key"]({"app": " Notes ", "key": "Return"}, ctx)
    assert result.text == "ok"
    assert calls == [("press_key", {"app": "Notes", "key": "Return"})]
    with pytest.raises(ToolError):
        await tools["computer_use_press_key"]({"app": "123", "key": "Return"}, ctx)
    assert len(calls) == 1  # a refused target never reaches the client
