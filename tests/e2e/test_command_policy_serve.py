"""The command policy through the real `pct serve` over stdio: no spelling of a denied
command runs (a fake `git` on PATH records every run), an asked command with no person to
ask is refused with `approval-unavailable`, lookalikes run, Code Mode's nested
`tools.exec_command` is judged by the same policy (and asked whatever Code Mode's approval
mode), and random compositions of the denied
command never run it."""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from pct_procs import PCT, LineServe, child_env, stop, write_config

from tests.capabilities.shell.command_spellings import DENIED_SPELLINGS, LOOKALIKES
from tests.capabilities.shell.test_command_policy_judge import compositions

pytestmark = pytest.mark.e2e

POLICY = {
    "default": "allow",
    "rules": [
        {"prefix": "git push", "decision": "deny"},
        {"prefix": "curl", "decision": "ask"},
    ],
}


def text_of(result: dict[str, object]) -> str:
    content = result["content"]
    assert isinstance(content, list)
    return "".join(c["text"] for c in content if c.get("type") == "text")


def error_code(result: dict[str, object]) -> object:
    meta = result.get("_meta")
    assert isinstance(meta, dict), result
    error = meta["pct/error"]
    assert isinstance(error, dict)
    return error["code"]


@pytest.fixture(scope="module")
def serve(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[LineServe, Path, Path]]:
    root = tmp_path_factory.mktemp("command-policy")
    agent, work = root / "agent", root / "work"
    bin_dir = work / "bin"
    bin_dir.mkdir(parents=True)
    log = root / "git-ran.log"
    fake = bin_dir / "git"
    fake.write_text(f'#!/bin/sh\necho "git $*" >> {log}\necho fake-git "$@"\n')
    fake.chmod(0o755)
    (work / "notes.txt").write_text("remember: git push\n")
    write_config(
        agent,
        {
            "shellSessions": {"enabled": True},
            # Code Mode's approval mode waives a nested patch's question, never the command
            # policy's: with `always` an asked nested command must still be asked.
            "codeMode": {"enabled": True, "approvalMode": "always"},
            "pct": {"commands": POLICY},
        },
    )
    env = child_env(agent, PATH=f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}")
    proc = subprocess.Popen(
        [PCT, "serve"],
        cwd=work,
        env=env,
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
            "capabilities": {},  # no elicitation: nobody can be asked
            "clientInfo": {"name": "command-policy", "version": "1"},
        }
        assert "result" in server.rpc("initialize", init)
        assert proc.stdin is not None
        proc.stdin.write(json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}))
        proc.stdin.write("\n")
        proc.stdin.flush()
        yield server, work, log
    finally:
        stop(proc)


def test_the_fake_git_records_a_run(serve: tuple[LineServe, Path, Path]) -> None:
    server, _, log = serve
    result = server.call("exec_command", {"cmd": "git pull", "yield_time_ms": 5000})
    assert not result.get("isError"), text_of(result)
    assert "fake-git pull" in text_of(result)
    assert "git pull" in log.read_text()
    log.unlink()


@pytest.mark.parametrize(("category", "line"), DENIED_SPELLINGS)
def test_no_spelling_of_a_denied_command_runs(
    serve: tuple[LineServe, Path, Path], category: str, line: str
) -> None:
    server, work, log = serve
    cmd = line.replace("/usr/bin/git", str(work / "bin" / "git"))
    result = server.call("exec_command", {"cmd": cmd, "yield_time_ms": 2000})
    text = text_of(result)
    assert result.get("isError"), (category, cmd, text)
    assert error_code(result) == "command-denied", text
    assert 'rule "git push" (deny)' in text
    assert "Do not try another spelling" in text
    assert not log.exists(), (category, cmd, log.read_text())


@pytest.mark.parametrize("line", LOOKALIKES)
def test_lookalikes_run(serve: tuple[LineServe, Path, Path], line: str) -> None:
    server, _, log = serve
    result = server.call("exec_command", {"cmd": line, "yield_time_ms": 5000})
    assert not result.get("isError"), (line, text_of(result))
    if log.exists():
        assert "push" not in log.read_text()
        log.unlink()


def test_echo_and_grep_show_the_words(serve: tuple[LineServe, Path, Path]) -> None:
    server, _, _ = serve
    echoed = server.call("exec_command", {"cmd": "echo git push", "yield_time_ms": 5000})
    assert "git push" in text_of(echoed)
    grepped = server.call(
        "exec_command", {"cmd": 'grep "git push" notes.txt', "yield_time_ms": 5000}
    )
    assert "remember: git push" in text_of(grepped)


def test_an_asked_command_without_a_person_is_refused(serve: tuple[LineServe, Path, Path]) -> None:
    server, work, _ = serve
    result = server.call("exec_command", {"cmd": "curl -o fetched x; touch asked-ran"})
    text = text_of(result)
    assert result.get("isError"), text
    assert error_code(result) == "approval-unavailable"
    assert 'rule "curl" (ask)' in text
    assert "Nothing ran." in text
    assert not (work / "asked-ran").exists()


def test_nested_calls_are_judged_alike(serve: tuple[LineServe, Path, Path]) -> None:
    server, work, log = serve
    code = (
        "for cmd in ['git push', 'bash -c \"git push\"', 'curl x; touch nested-ran']:\n"
        "    try:\n"
        "        await tools.exec_command(cmd=cmd)\n"
        "    except Exception as exc:\n"
        "        print('ERR', exc.code)\n"
        "r = await tools.exec_command(cmd='echo git push')\n"
        "print('OK', r['stdout'].strip())\n"
    )
    result = server.call("exec", {"code": code})
    text = text_of(result)
    assert not result.get("isError"), text
    assert text.count("ERR command-denied") == 2, text
    assert "ERR approval-unavailable" in text
    assert "OK git push" in text
    assert not log.exists()
    assert not (work / "nested-ran").exists()


def test_write_stdin_input_is_not_judged(serve: tuple[LineServe, Path, Path]) -> None:
    """The policy judges what starts; a shell started by an allowed line reads its input
    unjudged, which the docs say plainly (the sandbox confines what runs)."""
    server, _, log = serve
    started = server.call("exec_command", {"cmd": "cat", "yield_time_ms": 100})
    session_id = text_of(started).split()[1].rstrip(":")
    sent = server.call(
        "write_stdin",
        {"session_id": session_id, "chars": "git push\n", "closeStdin": True},
    )
    assert not sent.get("isError"), text_of(sent)
    assert not log.exists()  # `cat` only echoes it


@settings(
    max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(compositions())
def test_random_compositions_never_run(serve: tuple[LineServe, Path, Path], line: str) -> None:
    server, _, log = serve
    result = server.call("exec_command", {"cmd": line, "yield_time_ms": 2000})
    assert result.get("isError"), (line, text_of(result))
    assert error_code(result) == "command-denied"
    assert not log.exists(), line
