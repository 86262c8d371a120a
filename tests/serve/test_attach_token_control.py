"""Attach snippets, the token file and the live-control channel."""

from __future__ import annotations

import asyncio
import json
import os
import stat
import tomllib
from pathlib import Path
from typing import Any

import pytest

from pct_runtime.cli import main
from pct_runtime.cli_commands.attach_cmd import snippet
from pct_runtime.serve.live.control import ControlServer, list_runtimes, request
from pct_runtime.serve.mcp.http import parse_listen
from pct_runtime.serve.token import load_or_create_token, token_matches, token_path


def test_stdio_snippets_start_pct_serve() -> None:
    codex = snippet("codex", None, "/opt/pct")
    assert "codex mcp add pct -- /opt/pct serve --sandbox workspace-write\n" in codex
    args = 'args = ["serve", "--sandbox", "workspace-write"]'
    assert f'[mcp_servers.pct]\ncommand = "/opt/pct"\n{args}\nrequired = true' in codex
    custom = snippet("codex", None, "pct", "/srv/agent")
    assert 'env = { PI_CODING_AGENT_DIR = "/srv/agent" }' in custom
    assert "codex mcp add pct --env PI_CODING_AGENT_DIR=/srv/agent -- pct serve --sandbox" in custom
    assert (
        snippet("claude", None, "pct", "/a")
        == "claude mcp add -e PI_CODING_AGENT_DIR=/a pct -- pct serve --sandbox workspace-write\n"
    )
    assert (
        snippet("claude", None, "pct")
        == "claude mcp add pct -- pct serve --sandbox workspace-write\n"
    )
    # Pi's snippets: tests/serve/test_attach_pi.py


def test_http_snippets_say_the_server_chooses_the_sandbox(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["attach", "claude", "--http", "http://127.0.0.1:9/mcp"]) == 0
    assert "start it with --sandbox workspace-write" in capsys.readouterr().out


def test_codex_one_liners_say_they_do_not_set_required() -> None:
    """`codex mcp add` cannot set `required = true` or the approval mode `codex exec` needs
    to let a call through; the snippet says so next to it, and its table sets both."""
    for url in (None, "http://127.0.0.1:8765/mcp"):
        codex = snippet("codex", url, "pct")
        one_liner, table = codex.split("\n\n", 1)
        assert "it sets neither required = true" in one_liner
        assert "approval line" in one_liner
        parsed = tomllib.loads(table[table.index("[mcp_servers.pct]") :])["mcp_servers"]["pct"]
        assert parsed["required"] is True
        assert parsed["tool_timeout_sec"] == 120
        assert parsed["default_tools_approval_mode"] == "approve"
    assert (
        "\ncodex mcp add pct --url http://127.0.0.1:8765/mcp --bearer-token-env-var PCT_TOKEN\n"
        in (snippet("codex", "http://127.0.0.1:8765/mcp", "pct"))
    )


def test_http_snippets_use_the_url_and_pct_token() -> None:
    url = "http://127.0.0.1:8765/mcp"
    codex = snippet("codex", url, "pct")
    assert f'url = "{url}"' in codex
    assert 'bearer_token_env_var = "PCT_TOKEN"' in codex
    assert snippet("claude", url, "pct") == (
        f'claude mcp add --transport http pct {url} --header "Authorization: Bearer $PCT_TOKEN"\n'
    )


def test_attach_command_never_prints_the_token(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(tmp_path))
    token = load_or_create_token(tmp_path, env={})
    assert main(["attach", "codex", "--http", "http://127.0.0.1:9/mcp"]) == 0
    out = capsys.readouterr().out
    assert token not in out
    assert f'export PCT_TOKEN="$(cat {token_path(tmp_path)})"' in out


def test_token_is_private_stable_and_overridable(tmp_path: Path) -> None:
    first = load_or_create_token(tmp_path, env={})
    assert len(first) >= 32
    path = token_path(tmp_path)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    assert load_or_create_token(tmp_path, env={}) == first
    assert load_or_create_token(tmp_path, env={"PCT_TOKEN": "mine"}) == "mine"
    assert token_matches(first, first)
    assert not token_matches(first, None)
    assert not token_matches(first, first + "x")


@pytest.mark.parametrize(
    ("text", "expected"),
    [("8765", ("127.0.0.1", 8765)), ("0.0.0.0:80", ("0.0.0.0", 80)), ("[::1]:9", ("::1", 9))],
)
def test_parse_listen(text: str, expected: tuple[str, int]) -> None:
    assert parse_listen(text) == expected


@pytest.mark.parametrize("text", ["", "host:", "x:99999", "[::1]9", "abc"])
def test_parse_listen_rejects(text: str) -> None:
    with pytest.raises(ValueError, match=r"port|host|expected"):
        parse_listen(text)


async def test_control_channel_registry_and_auth(tmp_path: Path) -> None:
    seen: list[str] = []

    async def handler(op: str) -> dict[str, Any]:
        seen.append(op)
        return {"ok": True, "message": f"did {op}"}

    server = ControlServer(tmp_path, "secret", handler, kind="pct serve", mcp="stdio")
    await server.start()
    try:
        entries = list_runtimes(tmp_path)
        assert [(e.pid, e.kind, e.mcp) for e in entries] == [(os.getpid(), "pct serve", "stdio")]
        assert stat.S_IMODE(entries[0].path.stat().st_mode) == 0o600
        assert await request(entries[0], "secret", "reload") == {
            "ok": True,
            "message": "did reload",
        }
        assert await request(entries[0], "wrong", "reload") == {
            "ok": False,
            "error": "unauthorized",
        }
        assert await request(entries[0], "secret", "rm -rf") == {
            "ok": False,
            "error": "unknown op 'rm -rf'; expected one of: reload, status, ping",
        }
        host, _, port = entries[0].control.rpartition(":")
        reader, writer = await asyncio.open_connection(host, int(port))
        writer.write(b"not json\n")
        await writer.drain()
        assert json.loads(await reader.readline()) == {
            "ok": False,
            "error": "malformed request: not JSON",
        }
        writer.close()
        assert seen == ["reload"]
    finally:
        await server.aclose()
    assert list_runtimes(tmp_path) == []


def test_stale_registry_entries_are_ignored_and_swept(tmp_path: Path) -> None:
    directory = tmp_path / "pct" / "runtimes"
    directory.mkdir(parents=True)
    dead = directory / "999999-dead.json"
    dead.write_text(json.dumps({"pid": 999999, "kind": "pct serve", "control": "127.0.0.1:1"}))
    (directory / "garbage.json").write_text("{")
    assert list_runtimes(tmp_path) == []
    assert not dead.exists()


def _entry(agent: Path, pid: int, control: str) -> Path:
    directory = agent / "pct" / "runtimes"
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / f"{pid}-stale.json"
    path.write_text(json.dumps({"pid": pid, "kind": "pct serve", "control": control, "mcp": "x"}))
    return path


def _refused_address() -> str:
    import socket

    with socket.socket() as sock:  # bound, never listening: connecting is refused
        sock.bind(("127.0.0.1", 0))
        return f"127.0.0.1:{sock.getsockname()[1]}"


def test_an_unreaped_killed_runtime_is_swept(tmp_path: Path) -> None:
    """A SIGKILLed child its parent has not waited for is a zombie: kill(pid, 0) still
    succeeds, but it will never serve again."""
    import signal
    import subprocess
    import sys
    import time

    listen = (
        "import socket, time; s = socket.socket(); s.bind(('127.0.0.1', 0)); s.listen();"
        "print(s.getsockname()[1], flush=True); time.sleep(60)"
    )
    child = subprocess.Popen([sys.executable, "-c", listen], stdout=subprocess.PIPE, text=True)
    try:
        assert child.stdout is not None
        port = int(child.stdout.readline())
        path = _entry(tmp_path, child.pid, f"127.0.0.1:{port}")
        assert [e.pid for e in list_runtimes(tmp_path)] == [child.pid]  # alive: listed
        os.kill(child.pid, signal.SIGKILL)
        stat_file = Path(f"/proc/{child.pid}/stat")
        for _ in range(1000):  # the kill is asynchronous; wait for the zombie state
            if stat_file.read_text().rpartition(")")[2].split()[0] == "Z":
                break
            time.sleep(0.01)
        assert list_runtimes(tmp_path) == []
        assert not path.exists()
    finally:
        child.kill()
        child.wait()
        if child.stdout is not None:
            child.stdout.close()


def test_a_registered_runtime_that_refuses_connections_is_dropped_silently(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A live pid (reused, or a zombie on a system without procfs) whose control port has
    no listener is a runtime that died without cleanup: not reported, entry removed."""
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(tmp_path))
    path = _entry(tmp_path, os.getpid(), _refused_address())
    (tmp_path / "extensions").mkdir()
    (tmp_path / "extensions" / "pi-codex-toolkit.json").write_text("{}", encoding="utf-8")
    assert main(["reload"]) == 0
    out, err = capsys.readouterr()
    assert err == ""
    assert out == "Pi Codex Toolkit configuration reloaded.\n"
    assert not path.exists()
    path = _entry(tmp_path, os.getpid(), _refused_address())
    assert main(["status", "--live"]) == 1
    assert capsys.readouterr().err == (
        "pct: no running pct runtime answered; start one with `pct serve` (or the console).\n"
    )
    assert not path.exists()
