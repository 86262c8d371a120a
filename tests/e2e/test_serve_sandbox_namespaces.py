"""What Landlock and seccomp alone let a `workspace-write` job do, refused by the namespaces.

Every test drives a real `pct serve --sandbox workspace-write` over stdio, once as root and
once as an unprivileged uid (`setpriv --reuid 65534`; skipped, with the reason, where that
uid cannot run pct or create user namespaces). The job is a small Python probe that prints
one `RESULT {json}` line; the test checks the probe's outcome and that nothing outside
changed.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import tty
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from pct_procs import PCT, text_of, write_config

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux namespaces"),
]

NOBODY = 65534


def _landlock_abi() -> int:
    from pct_runtime.host.system.sandbox.linux import landlock_abi

    return landlock_abi()


def _nobody_skip_reason() -> str | None:
    if os.geteuid() != 0:
        return "the runner is not root, so it cannot drop to another uid"
    if shutil.which("setpriv") is None:
        return "setpriv (util-linux) is missing"
    try:
        limit = int(Path("/proc/sys/user/max_user_namespaces").read_text())
    except (OSError, ValueError):
        limit = 0
    if limit <= 0:
        return "user namespaces are disabled (user.max_user_namespaces is 0)"
    from pct_runtime.host.system.sandbox import bwrap

    found = bwrap.locate()
    if found is None:
        return "no bubblewrap here"
    inside = [found.path, "--ro-bind", "/", "/", "--dev", "/dev", "--unshare-user", "--"]
    probe = subprocess.run(
        [*_drop(), *inside, sys.executable, "-I", "-c", "import pct_runtime"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        cwd="/",
    )
    if probe.returncode != 0:
        said = " ".join(probe.stderr.split())[:200]
        return f"uid {NOBODY} cannot run this Python inside a user namespace ({said})"
    return None


def _drop() -> list[str]:
    return ["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups", "--"]


@pytest.fixture(params=["root", "nobody"])
def user(request: pytest.FixtureRequest) -> str:
    if _landlock_abi() < 3:
        pytest.skip("no Landlock ABI 3: pct refuses --sandbox here")
    if request.param == "root" and os.geteuid() != 0:
        pytest.skip("the runner is not root")
    if request.param == "nobody" and (reason := _nobody_skip_reason()) is not None:
        pytest.skip(reason)
    return str(request.param)


@pytest.fixture
def box(user: str) -> Iterator[dict[str, Path]]:
    """A private tree the chosen uid owns: workspace (with the agent dir inside it, as with
    the default `~/.pi/agent` and the workspace at $HOME), TMPDIR, and `outside`."""
    base = Path(tempfile.mkdtemp(prefix="pct-ns-"))
    try:
        work = base / "work"
        paths = {
            "base": base,
            "work": work,
            "agent": work / "agent",
            "temp": base / "temp",
            "outside": base / "outside",
        }
        for path in paths.values():
            path.mkdir(exist_ok=True)
        write_config(paths["agent"], {"shellSessions": {"enabled": True}})
        state = paths["agent"] / "pct"
        (state / "journal-spool").mkdir(parents=True)
        (state / "token").write_text("SECRET-TOKEN-1234\n", encoding="ascii")
        if user == "nobody":
            base.chmod(0o755)
            for path in base.rglob("*"):
                os.lchown(path, NOBODY, NOBODY)
            os.lchown(base, NOBODY, NOBODY)
        yield paths
    finally:
        shutil.rmtree(base, ignore_errors=True)


def _params(box: dict[str, Path], user: str) -> StdioServerParameters:
    command = [PCT, "serve", "--sandbox", "workspace-write"]
    if user == "nobody":
        command = [*_drop(), *command]
    return StdioServerParameters(
        command=command[0],
        args=command[1:],
        env={
            "PI_CODING_AGENT_DIR": str(box["agent"]),
            "TMPDIR": str(box["temp"]),
            "HOME": str(box["base"]),
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            **{key: os.environ[key] for key in ("PYTHONPATH",) if key in os.environ},
        },
        cwd=box["work"],
    )


@contextlib.asynccontextmanager
async def _serve(box: dict[str, Path], user: str) -> AsyncIterator[Client]:
    async with Client(_params(box, user), mode="legacy") as client:
        yield client


async def _probe(client: Client, box: dict[str, Path], code: str, *args: str) -> dict[str, object]:
    script = box["work"] / "probe.py"
    script.write_text(code, encoding="utf-8")
    os.chmod(script, 0o644)
    quoted = " ".join(f"'{arg}'" for arg in args)
    result = await client.call_tool(
        "exec_command", {"cmd": f"{sys.executable} {script} {quoted}", "yield_time_ms": 20000}
    )
    text = text_of(result)
    line = next((ln for ln in text.splitlines() if ln.startswith("RESULT ")), None)
    assert line is not None, text
    loaded: dict[str, object] = json.loads(line[len("RESULT ") :])
    return loaded


METADATA = """
import json, os, sys
path = sys.argv[1]
out = {}
for name, change in (
    ("chmod", lambda: os.chmod(path, 0o777)),
    ("chown", lambda: os.chown(path, os.getuid(), os.getgid())),
    ("utime", lambda: os.utime(path, (0, 0))),
    ("setxattr", lambda: os.setxattr(path, "user.pct", b"x")),
):
    try:
        change()
        out[name] = "changed"
    except OSError as exc:
        out[name] = exc.errno
print("RESULT", json.dumps(out))
"""


async def test_metadata_writes_outside_the_roots_fail(box: dict[str, Path], user: str) -> None:
    target = box["outside"] / "file.txt"
    target.write_text("keep\n", encoding="utf-8")
    os.chmod(target, 0o644)
    os.utime(target, (1_000_000, 1_000_000))
    if user == "nobody":
        os.chown(target, NOBODY, NOBODY)
    before = target.stat()
    async with _serve(box, user) as client:
        result = await _probe(client, box, METADATA, str(target))
    assert "changed" not in result.values(), result
    after = target.stat()
    assert (after.st_mode, after.st_uid, after.st_gid) == (
        before.st_mode,
        before.st_uid,
        before.st_gid,
    )
    assert after.st_mtime == before.st_mtime
    with contextlib.suppress(OSError):
        assert "user.pct" not in os.listxattr(target)


SENDMSG = """
import array, json, socket, sys
path = sys.argv[1]
out = {}
try:
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    sock.sendmsg([b"from-socket"], [], 0, path)
    out["socket"] = "sent"
except OSError as exc:
    out["socket"] = exc.errno
try:
    a, _b = socket.socketpair(socket.AF_UNIX, socket.SOCK_DGRAM)
    fds = [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", [1]))]
    a.sendmsg([b"from-pair"], fds, 0, path)
    out["pair"] = "sent"
except OSError as exc:
    out["pair"] = exc.errno
print("RESULT", json.dumps(out))
"""


async def test_addressed_sendmsg_to_an_outside_datagram_socket_fails(
    box: dict[str, Path], user: str
) -> None:
    path = box["outside"] / "d.sock"
    receiver = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    try:
        receiver.bind(str(path))
        os.chmod(path, 0o777)  # so only the sandbox can stop an unprivileged job
        receiver.setblocking(False)
        async with _serve(box, user) as client:
            result = await _probe(client, box, SENDMSG, str(path))
        got: list[bytes] = []
        with contextlib.suppress(BlockingIOError):
            while True:
                got.append(receiver.recv(100))
    finally:
        receiver.close()
    assert got == []
    assert result["socket"] != "sent", result
    assert result["pair"] != "sent", result


PTY = """
import fcntl, json, os, sys, termios
path = sys.argv[1]
out = {}
try:
    fd = os.open(path, os.O_RDWR | os.O_NOCTTY)
    out["open"] = "opened"
    try:
        os.write(fd, b"INJECTED-ESCAPE\\n")
        out["write"] = "wrote"
    except OSError as exc:
        out["write"] = exc.errno
    try:
        for byte in b"id\\n":
            fcntl.ioctl(fd, termios.TIOCSTI, bytes([byte]))
        out["tiocsti"] = "injected"
    except OSError as exc:
        out["tiocsti"] = exc.errno
except OSError as exc:
    out["open"] = exc.errno
try:
    tty_fd = os.open("/dev/tty", os.O_RDWR)
    fcntl.ioctl(tty_fd, termios.TIOCSTI, b"x")
    out["ctty"] = "injected"
except OSError as exc:
    out["ctty"] = exc.errno
print("RESULT", json.dumps(out))
"""


def _drain(fd: int) -> bytes:
    os.set_blocking(fd, False)
    got = b""
    with contextlib.suppress(BlockingIOError, OSError):
        while chunk := os.read(fd, 1000):
            got += chunk
    return got


async def test_the_job_cannot_open_the_users_terminal(box: dict[str, Path], user: str) -> None:
    master, slave = os.openpty()
    try:
        tty.setraw(slave)
        path = os.ttyname(slave)
        if user == "nobody":
            os.chown(path, NOBODY, -1)  # the terminal of the user the job runs as
        async with _serve(box, user) as client:
            result = await _probe(client, box, PTY, path)
        to_terminal = _drain(master)
        injected = _drain(slave)
    finally:
        os.close(master)
        os.close(slave)
    assert b"INJECTED" not in to_terminal
    assert injected == b""
    assert result["open"] != "opened", result
    assert result["ctty"] != "injected", result


PROC = """
import json, os, sys
pid = sys.argv[1]
out = {"visible": os.path.exists(f"/proc/{pid}/cmdline")}
try:
    with open(f"/proc/{pid}/mem", "rb") as mem:
        out["mem"] = "opened"
except OSError as exc:
    out["mem"] = exc.errno
found = []
for name in os.listdir("/proc"):
    if name.isdigit():
        try:
            with open(f"/proc/{name}/cmdline", "rb") as fh:
                argv = fh.read().split(b"\\0")
        except OSError:
            continue
        if any(a.endswith(b"pct") for a in argv) and b"serve" in argv:
            found.append(name)
out["found"] = found
print("RESULT", json.dumps(out))
"""


def _pct_pid() -> int:
    """The `pct serve` this test started (a child of this process)."""
    me = str(os.getpid())
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            status = Path(f"/proc/{name}/status").read_text()
            argv = Path(f"/proc/{name}/cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        ppid = next(ln.split()[1] for ln in status.splitlines() if ln.startswith("PPid:"))
        if ppid == me and b"serve" in argv:
            return int(name)
    raise AssertionError("pct serve is not a child of the test")


async def test_the_job_cannot_see_pct_in_proc(box: dict[str, Path], user: str) -> None:
    async with _serve(box, user) as client:
        result = await _probe(client, box, PROC, str(_pct_pid()))
    assert result["visible"] is False, result
    assert result["mem"] != "opened", result
    assert result["found"] == [], result


STATE = """
import json, os, sys
state = sys.argv[1]
out = {}
try:
    with open(os.path.join(state, "token")) as fh:
        out["token"] = fh.read()
except OSError as exc:
    out["token"] = exc.errno
for name in ("journal-spool/forged.json", "forged"):
    try:
        with open(os.path.join(state, name), "w") as fh:
            fh.write("{}")
        out[name] = "created"
    except OSError as exc:
        out[name] = exc.errno
print("RESULT", json.dumps(out))
"""


async def test_pcts_state_under_the_workspace_is_masked(box: dict[str, Path], user: str) -> None:
    state = box["agent"] / "pct"
    async with _serve(box, user) as client:
        result = await _probe(client, box, STATE, str(state))
    assert "SECRET" not in json.dumps(result)
    assert "created" not in result.values(), result
    assert (state / "token").read_text(encoding="ascii") == "SECRET-TOKEN-1234\n"
    assert not (state / "journal-spool" / "forged.json").exists()
    assert not (state / "forged").exists()


RECOVERY = """
import json, sys
path = sys.argv[1]
out = {}
try:
    with open(path, "rb") as fh:
        out["read"] = len(fh.read())
except OSError as exc:
    out["read"] = exc.errno
try:
    with open(path, "ab") as fh:
        fh.write(b"forged")
    out["append"] = "appended"
except OSError as exc:
    out["append"] = exc.errno
print("RESULT", json.dumps(out))
"""


async def test_recovery_files_are_readable_never_writable(box: dict[str, Path], user: str) -> None:
    """The capture root falls back to `<agent dir>/pct/output` (no $XDG_RUNTIME_DIR here),
    inside the masked state dir: it is bound back read-only, so the model can still `cat`
    the recovery file it is pointed to, and no job can forge one."""
    async with _serve(box, user) as client:
        big = await client.call_tool(
            "exec_command",
            {"cmd": "yes 0123456789 | head -c 400000", "yield_time_ms": 20000},
        )
        text = text_of(big)
        line = next(ln for ln in text.splitlines() if "stdout recovery:" in ln and " — " in ln)
        path = line.split(" — ", 1)[1].rsplit(" [", 1)[0]
        assert path.startswith(str(box["agent"] / "pct" / "output")), line
        result = await _probe(client, box, RECOVERY, path)
    assert result["read"] == 400000, result
    assert result["append"] != "appended", result
    with contextlib.suppress(FileNotFoundError):  # pct may have removed it at session end
        assert b"forged" not in await asyncio.to_thread(Path(path).read_bytes)
