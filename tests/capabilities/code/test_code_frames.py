"""Frames a cell writes itself (the channel is reachable from cell code): none wedges the host.

A cell reaches its socket through `tools._rt.sock`, so these programs are what a hostile or
broken cell can do. Each bad frame fails that cell with a model-facing error, its process is
gone, and the next cell runs.
"""

from __future__ import annotations

import asyncio
import json
import socket
from collections.abc import Callable
from typing import Any

import pytest
from code_helpers import FakeAdapter, wait_gone

from pct_runtime.capabilities.base import CallContext
from pct_runtime.capabilities.code import CodeManager
from pct_runtime.capabilities.code import worker as worker_mod
from pct_runtime.capabilities.code.bridge import MAX_FRAME_BYTES, decode_frame


def raw_frame(body: str) -> str:
    """Cell code that writes `body` (a Python bytes expression) as one frame, then idles."""
    return (
        f"body = {body}\n"
        "tools._rt.sock.sendall(len(body).to_bytes(4, 'big') + body)\n"
        "while True:\n    pass\n"
    )


async def run(manager: CodeManager, ctx: CallContext, code: str, **extra: Any) -> Any:
    return await manager.exec({"code": code, "yield_time_ms": 10_000, **extra}, ctx)


DEEP = "b'{\"t\":\"o\",\"s\":' + b'[' * 100_000 + b']' * 100_000 + b'}'"


async def test_deep_frames_fail_their_cells_and_code_mode_keeps_working(
    manager: CodeManager, ctx: CallContext
) -> None:
    for _ in range(5):  # more than the 4 cells that may run at once: none stays running
        r = await run(manager, ctx, raw_frame(DEEP))
        assert r.details["status"] == "failed", r.text
        assert (
            "The cell wrote a frame nested deeper than 64 levels; Code Mode stopped it. "
            "Return flatter data." in r.text
        )
    assert await asyncio.to_thread(wait_gone, manager.spawned_pids[:5]) == []
    r = await run(manager, ctx, "1 + 1")
    assert r.details["status"] == "completed"
    assert r.details["result"] == 2


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        (
            "b'x' * 20",
            "The cell wrote a frame that is not UTF-8 JSON (Expecting value: line 1 column 1",
        ),
        ("b'[1, 2]'", "The cell wrote a frame that is not a JSON object; Code Mode stopped it."),
        ('b\'{"t":"o","s":"\\xff"}\'', "The cell wrote a frame that is not UTF-8 JSON"),
    ],
)
async def test_malformed_frames_fail_the_cell_with_what_happened(
    manager: CodeManager, ctx: CallContext, body: str, expected: str
) -> None:
    r = await run(manager, ctx, raw_frame(body))
    assert r.details["status"] == "failed"
    assert expected in r.text
    assert "Use print(), text(), tools.* and the last expression" in r.text


async def test_an_oversized_frame_header_fails_the_cell(
    manager: CodeManager, ctx: CallContext
) -> None:
    code = (
        "tools._rt.sock.sendall((1 << 30).to_bytes(4, 'big') + b'{')\n"  # 1 GiB announced
        "while True:\n    pass\n"
    )
    r = await run(manager, ctx, code)
    assert r.details["status"] == "failed"
    assert (
        f"The cell wrote a frame of 1073741824 bytes, above the {MAX_FRAME_BYTES}-byte limit; "
        "Code Mode stopped it." in r.text
    )


async def test_lone_surrogates_in_a_frame_become_replacement_characters(
    manager: CodeManager, ctx: CallContext
) -> None:
    code = (
        'body = b\'{"t":"o","s":"a\\\\udcffb\\\\ud83d\\\\ude00"}\'\n'
        "tools._rt.sock.sendall(len(body).to_bytes(4, 'big') + body)\n"
        "print('after')"
    )
    r = await run(manager, ctx, code)
    assert r.details["status"] == "completed", r.text
    assert r.details["output"] == "a\ufffdb\U0001f600after\n"


@pytest.mark.parametrize(
    ("chunk", "problem"),
    [
        ("'[' * 5000 + ']' * 5000", "a result nested deeper than 64 levels"),
        ("'{{{'", "a result that is not JSON"),
    ],
)
async def test_a_reported_result_that_cannot_be_read_fails_the_cell(
    manager: CodeManager, ctx: CallContext, chunk: str, problem: str
) -> None:
    code = (
        "import json\n"
        "def frame(o):\n"
        "    b = json.dumps(o).encode()\n"
        "    tools._rt.sock.sendall(len(b).to_bytes(4, 'big') + b)\n"
        f"frame({{'t': 'rs', 's': {chunk}}})\n"
        "frame({'t': 'd', 'ok': True, 'has_result': True})\n"
        "while True:\n    pass\n"
    )
    r = await run(manager, ctx, code)
    assert r.details["status"] == "failed"
    assert f"The cell reported {problem}; Code Mode dropped it and failed the cell." in r.text
    assert "result" not in r.details


@pytest.mark.parametrize("depth", [100, 5000])
async def test_a_result_nested_too_deep_is_a_clear_cell_error(
    manager: CodeManager, ctx: CallContext, depth: int
) -> None:
    code = f"x = 1\nfor _ in range({depth}):\n    x = [x]\nx"
    r = await run(manager, ctx, code)
    assert r.details["status"] == "failed"
    assert (
        "The cell's result is nested deeper than 64 levels of lists/dicts, which Code Mode "
        "does not carry." in r.text
    )


async def test_a_result_within_the_depth_limit_is_returned(
    manager: CodeManager, ctx: CallContext
) -> None:
    r = await run(manager, ctx, "x = 'leaf'\nfor _ in range(63):\n    x = [x]\nx")
    assert r.details["status"] == "completed", r.text
    value = r.details["result"]
    for _ in range(63):
        value = value[0]
    assert value == "leaf"


async def test_nested_call_arguments_too_deep_raise_in_the_cell(
    make_manager: Callable[..., CodeManager], ctx: CallContext
) -> None:
    shell = FakeAdapter("exec_command")
    manager = make_manager([shell])
    code = (
        "deep = 1\nfor _ in range(100):\n    deep = [deep]\n"
        "try:\n    await tools.exec_command(cmd='x', extra=deep)\n"
        "except ValueError as e:\n    msg = str(e)\n"
        "ok = await tools.exec_command(cmd='y')\n"
        "[msg, ok['echo']]"
    )
    r = await run(manager, ctx, code)
    assert r.details["status"] == "completed", r.text
    message, echoed = r.details["result"]
    assert message.startswith("tools.exec_command arguments are nested deeper than 64 levels")
    assert echoed == {"cmd": "y"}
    assert shell.prepared == [{"cmd": "y"}]


def test_a_host_reply_the_cell_cannot_parse_fails_only_that_call() -> None:
    host, cell = socket.socketpair()
    with host, cell:
        rt = worker_mod._CellRuntime(cell, worker_mod._Reader(cell))
        try:
            first = rt.call("exec_command", {"cmd": "a"})
            second = rt.call("exec_command", {"cmd": "b"})
            deep = b'{"t":"r","i":1,"ok":true,"v":' + b"[" * 100_000 + b"]" * 100_000 + b"}"
            fine = json.dumps({"t": "r", "i": 2, "ok": True, "v": {"x": 1}}).encode()
            for body in (deep, fine):
                host.sendall(len(body).to_bytes(4, "big") + body)
            while not second.done():
                rt.on_readable()
            error = first.exception()
            assert isinstance(error, worker_mod.ToolError)
            assert error.code == "reply-unreadable"
            assert error.message == (
                "The reply to this call could not be read in the cell: it is nested too deeply "
                "to parse. Its outcome is unknown: check its effects before rerunning it."
            )
            assert second.result() == {"x": 1}
        finally:
            rt.loop.close()


def test_depth_check_ignores_brackets_inside_strings() -> None:
    text = json.dumps({"s": "[" * 1000, "k": [[[1]]]}).encode()
    assert not worker_mod.nested_deeper_than(text, 4)
    assert worker_mod.nested_deeper_than(text, 3)
    assert decode_frame(text)["s"] == "[" * 1000
