"""Through a real `pct serve` over stdio, raw bytes in: every request with an id is answered,
and a line without end closes the connection with the reason on stderr."""

from __future__ import annotations

import contextlib
import json
import subprocess
import threading
from pathlib import Path

import pytest
from pct_procs import INITIALIZED, PCT, RawStdio, child_env, initialize_request, stop

pytestmark = pytest.mark.e2e

PING = {"jsonrpc": "2.0", "id": "after", "method": "ping"}
DEEP_TEXT = "Invalid Request: the message is nested too deeply for pct's MCP parser"


def call_line(request_id: object, arguments: str, *, id_last: bool = False) -> bytes:
    """A raw `tools/call` line; `arguments` is JSON text put in as is."""
    head = '{"jsonrpc":"2.0",' + ("" if id_last else f'"id":{json.dumps(request_id)},')
    tail = f',"id":{json.dumps(request_id)}' if id_last else ""
    body = f'"method":"tools/call","params":{{"name":"exec_command","arguments":{arguments}}}'
    return (head + body + tail + "}\n").encode()


@pytest.fixture
def server(dirs: tuple[Path, Path]) -> RawStdio:
    agent, work = dirs
    proc = RawStdio(agent, work)
    proc.initialize()
    return proc


def assert_still_serving(server: RawStdio) -> None:
    server.send(PING)
    assert server.line() == {"jsonrpc": "2.0", "id": "after", "result": {}}


def test_arguments_500_levels_deep_get_an_error_answer(server: RawStdio) -> None:
    with server:
        server.write(call_line(7, '{"cmd":"true","x":' + "[" * 500 + "]" * 500 + "}"))
        reply = server.line()
        assert reply["id"] == 7
        assert reply["error"]["code"] == -32600
        assert reply["error"]["message"].startswith(DEEP_TEXT)
        assert_still_serving(server)


def test_a_request_100000_levels_deep_is_answered_with_its_id(server: RawStdio) -> None:
    with server:
        deep = '{"x":' + "[" * 100_000 + "]" * 100_000 + "}"
        server.write(call_line("deep-1", deep, id_last=True))
        reply = server.line()
        assert reply["id"] == "deep-1"
        assert reply["error"]["message"].startswith(DEEP_TEXT)
        assert_still_serving(server)


def test_a_lone_surrogate_escape_is_answered(server: RawStdio) -> None:
    with server:
        server.write(call_line(8, '{"cmd":"echo \\udcff"}'))
        reply = server.line()
        assert reply["id"] == 8
        assert reply["error"] == {
            "code": -32600,
            "message": "Invalid Request: a string has a lone surrogate escape (\\ud800-\\udfff), "
            "which is not Unicode text; send the character itself or a valid surrogate pair.",
        }
        assert_still_serving(server)


def test_a_batch_gets_an_error_for_each_request_in_it(server: RawStdio) -> None:
    with server:
        batch = [
            {"jsonrpc": "2.0", "id": 4, "method": "ping"},
            {"jsonrpc": "2.0", "method": "notifications/progress", "params": {}},
            {"jsonrpc": "2.0", "id": "five", "method": "tools/list"},
        ]
        server.send(batch)
        reply = server.line()
        assert isinstance(reply, list)
        assert [r["id"] for r in reply] == [4, "five"]
        for answer in reply:
            assert answer["error"]["code"] == -32600
            assert "JSON-RPC batches are not supported" in answer["error"]["message"]
        server.send([])
        empty = server.line()
        assert empty["id"] is None
        assert empty["error"]["code"] == -32600
        assert_still_serving(server)


def test_a_line_that_is_not_json_gets_a_parse_error_and_the_next_request_is_served(
    server: RawStdio,
) -> None:
    with server:
        server.write(b"this is not json\n" + json.dumps(PING).encode() + b"\n")
        error = server.line()
        assert error["id"] is None
        assert error["error"]["code"] == -32700
        assert error["error"]["message"].startswith("Parse error: the line is not JSON")
        assert server.line() == {"jsonrpc": "2.0", "id": "after", "result": {}}
        assert "answered a stdin line that is not JSON" in server.stderr_text()


def test_a_line_past_64_mib_closes_the_connection_with_the_reason(server: RawStdio) -> None:
    with server:
        assert_still_serving(server)

        def flood() -> None:
            with contextlib.suppress(BrokenPipeError):  # pct closed its end, as it should
                server.write(b"x" * (64 * 1024 * 1024 + 1))  # no newline

        writer = threading.Thread(target=flood, daemon=True)
        writer.start()
        assert server.proc.wait(60) == 1
        writer.join(30)
        assert server.line() == b""  # stdout closed; no answer was made up
        assert (
            "a stdin line reached 67,108,864 bytes without a newline; MCP over stdio sends one "
            "JSON-RPC message per line, so pct closed the connection." in server.stderr_text()
        )


def test_stdin_and_stdout_may_be_regular_files(dirs: tuple[Path, Path], tmp_path: Path) -> None:
    agent, work = dirs
    requests = tmp_path / "in.jsonl"
    answers = tmp_path / "out.jsonl"
    lines = [initialize_request("files"), INITIALIZED]  # (end of input cancels other calls)
    requests.write_text("".join(json.dumps(m) + "\n" for m in lines) + "garbage", "utf-8")
    with requests.open("rb") as stdin, answers.open("wb") as stdout:
        proc = subprocess.Popen(
            [PCT, "serve"],
            cwd=work,
            env=child_env(agent),
            stdin=stdin,
            stdout=stdout,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        try:
            assert proc.wait(60) == 0
        finally:
            stop(proc)
    replies = {r["id"]: r for r in map(json.loads, answers.read_text("utf-8").splitlines())}
    assert sorted(map(str, replies)) == ["1", "None"]
    assert replies[1]["result"]["serverInfo"]["name"] == "pct"
    assert replies[None]["error"]["code"] == -32700  # the last line, though it had no newline
