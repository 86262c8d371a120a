"""Bad `exec_command` / `write_stdin` input through the real `pct serve`: each gets a clear
error that says what was wrong and what to pass instead — never "failed unexpectedly" —
and nothing runs. Code Mode's nested `tools.exec_command` gets the same text."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from pct_procs import PCT, LineServe, child_env, stop, write_config

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
def serve(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[LineServe, Path]]:
    root = tmp_path_factory.mktemp("bad-inputs")
    agent, work = root / "agent", root / "work"
    work.mkdir()
    (work / "afile").write_text("x")
    write_config(
        agent,
        {"shellSessions": {"enabled": True}, "codeMode": {"enabled": True}},
    )
    proc = subprocess.Popen(
        [PCT, "serve"],
        cwd=work,
        env=child_env(agent),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        start_new_session=True,
    )
    try:
        server = LineServe(proc)
        init = {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "bad-inputs", "version": "1"},
        }
        assert "result" in server.rpc("initialize", init)
        assert proc.stdin is not None
        proc.stdin.write(json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}))
        proc.stdin.write("\n")
        proc.stdin.flush()
        yield server, work
    finally:
        stop(proc)


NOTHING = "Nothing ran."
TOO_LONG = "`workdir` is too long for this system"
EXEC_CASES: dict[str, tuple[dict[str, object], list[str]]] = {
    "a 5,000-character workdir": (
        {"cmd": "touch ran", "workdir": "a" * 5000},
        [TOO_LONG, "a path may have at most", "Pass a shorter path", NOTHING],
    ),
    "one name longer than the OS allows": (
        {"cmd": "touch ran", "workdir": "b" * 300},
        [TOO_LONG, "longest name of 300 bytes", NOTHING],
    ),
    "a workdir that does not exist": (
        {"cmd": "touch ran", "workdir": "nope"},
        ["'nope'", "does not exist", "Pass an existing directory as `workdir`", NOTHING],
    ),
    "a workdir that is a file": (
        {"cmd": "touch ran", "workdir": "afile"},
        ["'afile'", "is a file, not a directory", NOTHING],
    ),
    "a workdir under a file": (
        {"cmd": "touch ran", "workdir": "afile/sub"},
        ["is not a directory (a part of the path is a file)", NOTHING],
    ),
    "a NUL in workdir": (
        {"cmd": "touch ran", "workdir": "a\0b"},
        ["`workdir` must be a non-empty path string", NOTHING],
    ),
    "a cmd longer than the OS takes": (
        {"cmd": "touch ran; echo " + "x" * 300_000},
        ["`cmd` is too long to start: 300016 UTF-8 bytes", "Write the long part", NOTHING],
    ),
    "a NUL in cmd": ({"cmd": "touch ran\0"}, ["`cmd` must not contain NUL", NOTHING]),
    "a huge max_output_tokens": (
        {"cmd": "touch ran", "max_output_tokens": 10**30},
        ["`max_output_tokens` must be an integer from 256 to 65536; got 1000", NOTHING],
    ),
    "a huge float max_output_tokens": (
        {"cmd": "touch ran", "max_output_tokens": 1e300},
        ["`max_output_tokens` must be an integer from 256 to 65536; got 1e+300.", NOTHING],
    ),
    "an env field": (
        {"cmd": "touch ran", "env": {"A": "b\0"}},
        ["exec_command does not accept `env`", NOTHING],
    ),
}


@pytest.mark.parametrize("case", list(EXEC_CASES))
def test_bad_exec_command_input_gets_a_clear_error(
    serve: tuple[LineServe, Path], case: str
) -> None:
    server, work = serve
    arguments, expected = EXEC_CASES[case]
    is_error, text = server.outcome("exec_command", arguments)
    assert is_error, text
    assert "unexpectedly" not in text
    for part in expected:
        assert part in text
    assert len(text) < 800  # a 5,000-character path is not echoed back whole
    assert not (work / "ran").exists()


def test_code_modes_nested_exec_command_gets_the_same_error(serve: tuple[LineServe, Path]) -> None:
    server, work = serve
    code = (
        "try:\n"
        '    await tools.exec_command(cmd="touch ran", workdir="a" * 5000)\n'
        "except Exception as exc:\n"
        '    print("ERR", exc)\n'
    )
    is_error, text = server.outcome("exec", {"code": code})
    assert not is_error, text
    assert "unexpectedly" not in text
    assert f"ERR exec_command {TOO_LONG}" in text
    assert not (work / "ran").exists()


def test_bad_write_stdin_input_gets_a_clear_error(serve: tuple[LineServe, Path]) -> None:
    server, _ = serve
    is_error, text = server.outcome("exec_command", {"cmd": "cat", "yield_time_ms": 100})
    assert not is_error, text
    session_id = text.split()[1].rstrip(":")
    cases: list[tuple[dict[str, object], str]] = [
        ({"chars": "x" * 300_000}, "more than the 262144 bytes one shell session accepts"),
        ({"max_output_tokens": 10**30}, "`max_output_tokens` must be an integer from 256"),
        ({"yield_time_ms": -5}, "`yield_time_ms` must be an integer from 0 to"),
    ]
    try:
        for extra, expected in cases:
            is_error, text = server.outcome("write_stdin", {"session_id": session_id, **extra})
            assert is_error, text
            assert "unexpectedly" not in text
            assert expected in text
            assert "Nothing was sent." in text
    finally:
        server.outcome("write_stdin", {"session_id": session_id, "terminate": True})
