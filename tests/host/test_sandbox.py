"""`host.system.sandbox`: settings, roots, the denial heuristic, the key, Linux enforcement."""

from __future__ import annotations

import ctypes
import errno
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from pct_runtime.capabilities.apply_patch.readonly import READ_ONLY_PATCH_MESSAGE, ReadOnlyPatchTool
from pct_runtime.config.store import ConfigStore
from pct_runtime.host.system.sandbox import (
    Sandbox,
    SandboxConfigError,
    SandboxSettings,
    denial_note,
    looks_denied,
    macos,
    resolve_settings,
    settings_from_config,
    writable_roots,
)

linux_only = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux mechanism")


def _abi() -> int:
    if not sys.platform.startswith("linux"):
        return 0
    from pct_runtime.host.system.sandbox.linux import landlock_abi

    return landlock_abi()


needs_landlock = pytest.mark.skipif(_abi() < 3, reason="no Landlock ABI 3 on this kernel")


@pytest.fixture(autouse=True)
def _private_agent_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A sandbox masks (and so creates) `<agent dir>/pct`: keep it out of the real home."""
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(tmp_path / "agent-dir"))


def test_config_key_is_optional_and_checked() -> None:
    assert settings_from_config({}) is None
    assert settings_from_config({"pct": {}}) is None
    assert settings_from_config({"pct": {"sandbox": {}}}) == SandboxSettings()
    parsed = settings_from_config({"pct": {"sandbox": {"mode": "read-only", "network": True}}})
    assert parsed == SandboxSettings("read-only", True)
    for bad, detail in (
        ({"pct": {"sandbox": "read-only"}}, "pct.sandbox must be an object"),
        ({"pct": {"sandbox": {"mode": "full"}}}, "pct.sandbox.mode must be one of"),
        ({"pct": {"sandbox": {"network": 1}}}, "pct.sandbox.network must be true or false"),
    ):
        with pytest.raises(SandboxConfigError, match=detail):
            settings_from_config(bad)


def test_flags_win_over_the_config() -> None:
    configured = SandboxSettings("read-only", True)
    assert resolve_settings(None, False, None) == SandboxSettings("danger-full-access")
    assert resolve_settings(None, False, configured) == configured
    assert resolve_settings("workspace-write", False, configured) == SandboxSettings(
        "workspace-write", True
    )
    assert resolve_settings("read-only", True, None) == SandboxSettings("read-only", True)


def test_pi_keeps_the_pct_key_when_it_saves(tmp_path: Path) -> None:
    path = tmp_path / "pi-codex-toolkit.json"
    doc = {"applyPatch": {"enabled": True}, "pct": {"sandbox": {"mode": "workspace-write"}}}
    path.write_text(json.dumps(doc), encoding="utf-8")
    store = ConfigStore(path)
    read = store.read()
    assert read.error is None
    store.save(read.config.model_copy(), read.revision)
    saved = json.loads(path.read_text(encoding="utf-8"))
    assert saved["pct"] == {"sandbox": {"mode": "workspace-write"}}


def test_writable_roots_per_mode(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    temp = tmp_path / "temp"
    temp.mkdir()
    monkeypatch.setenv("TMPDIR", str(temp))
    monkeypatch.setattr("tempfile.tempdir", None)
    work = tmp_path / "work"
    work.mkdir()
    assert writable_roots(SandboxSettings("read-only"), work) == ()
    assert writable_roots(SandboxSettings("workspace-write"), work) == (
        work.resolve(),
        temp.resolve(),
    )
    assert writable_roots(SandboxSettings(), work) == (Path("/"),)


def test_denial_heuristic_needs_a_sandbox_a_failure_and_an_access_error() -> None:
    box = SandboxSettings("workspace-write")
    assert looks_denied(box, 1, "sh: 1: cannot create /x: Permission denied")
    assert looks_denied(box, 1, "PermissionError: [Errno 1] Operation not permitted")
    assert looks_denied(box, 2, "touch: cannot touch 'x': Read-only file system")
    assert not looks_denied(box, 0, "Permission denied")  # succeeded anyway
    assert not looks_denied(box, 1, "No such file or directory")
    assert not looks_denied(box, None, "Permission denied")
    assert not looks_denied(SandboxSettings(), 1, "Permission denied")  # no sandbox
    note = denial_note(SandboxSettings("read-only"), ())
    assert note.startswith("Command denied by sandbox: a kernel sandbox (read-only)")
    assert "write nowhere (read-only); outbound network is blocked" in note


def test_macos_profile_denies_writes_outside_the_roots_and_the_network(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(tmp_path / "agent"))
    roots = (Path("/w"), Path("/private/tmp"))
    text = macos.profile(SandboxSettings("workspace-write"), roots, (Path("/w/agent/pct"),))
    assert "(deny file-write*)" in text
    assert '(subpath (param "WRITABLE_ROOT_1"))' in text
    assert "(deny network*)" in text
    assert "/w" not in text  # paths travel as -D parameters, never quoted into the profile
    lines = text.splitlines()
    # Metadata changes are refused outside the roots, even on the writable devices.
    metadata = next(ln for ln in lines if ln.startswith("(deny file-write-mode"))
    for op in ("file-write-owner", "file-write-setugid", "file-write-times", "file-write-xattr"):
        assert op in metadata
    assert metadata.endswith(
        '(require-not (require-any (subpath (param "WRITABLE_ROOT_0")) '
        '(subpath (param "WRITABLE_ROOT_1")))))'
    )
    assert lines.index(metadata) > lines.index("(deny file-write*)") + 1  # after the allow
    ttys = next(ln for ln in lines if "ttys" in ln)
    assert ttys.startswith("(deny file-read* file-write* file-ioctl ")
    assert "ttys" not in "".join(ln for ln in lines if ln.startswith("(allow"))
    assert '(deny file-read* file-write* (subpath (param "MASKED_0")))' in lines
    assert '(deny network-outbound network-bind (subpath "/"))' in lines  # Unix sockets
    capture = macos.profile(
        SandboxSettings("workspace-write"), roots, (Path("/w/agent/pct"),), (Path("/c"),)
    ).splitlines()
    masked = capture.index('(deny file-read* file-write* (subpath (param "MASKED_0")))')
    # The capture root is readable even inside the masked dir, and never writable.
    assert capture.index('(deny file-write* (subpath (param "READABLE_0")))') > masked
    assert capture.index('(allow file-read* (subpath (param "READABLE_0")))') > masked
    read_only = macos.profile(SandboxSettings("read-only"), ())
    assert "(deny file-write-mode file-write-owner" in read_only
    assert "require-not" not in read_only  # no roots: refused everywhere
    argv = macos.wrap(SandboxSettings("workspace-write", True), roots, ["/bin/sh", "-c", "x"])
    assert argv[:2] == [macos.SANDBOX_EXEC, "-p"]
    assert "(deny network*)" not in argv[2]
    assert "unix" not in argv[2].lower()
    assert "network-outbound" not in argv[2]
    masked = os.path.realpath(tmp_path / "agent" / "pct")
    params = ["-D", "WRITABLE_ROOT_0=/w", "-D", "WRITABLE_ROOT_1=/private/tmp"]
    assert argv[3:] == [*params, "-D", f"MASKED_0={masked}", "--", "/bin/sh", "-c", "x"]


async def test_read_only_patch_refuses_at_prepare_before_anything() -> None:
    from pct_runtime.capabilities.base import ToolError

    with pytest.raises(ToolError) as caught:
        await ReadOnlyPatchTool(None).prepare({"patch": "x"}, None)  # type: ignore[arg-type]
    assert caught.value.code == "sandbox-read-only"
    assert caught.value.message == READ_ONLY_PATCH_MESSAGE


_SOCKET_PROBE = r"""
import ctypes, errno, socket, sys
results = []
a, b = socket.socketpair()
a.sendall(b"x"); results.append("pair:" + b.recv(1).decode())
for family in (socket.AF_INET, socket.AF_INET6, socket.AF_NETLINK):
    try:
        socket.socket(family, socket.SOCK_DGRAM).close(); results.append("open")
    except OSError as exc:
        results.append(errno.errorcode[exc.errno])
u = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
try:
    u.connect("/nonexistent-pct-socket"); results.append("connected")
except OSError as exc:
    results.append(errno.errorcode[exc.errno])
libc = ctypes.CDLL(None, use_errno=True)
params = ctypes.create_string_buffer(120)
rc = libc.syscall(425, 1, params)  # io_uring_setup
results.append("uring:" + (errno.errorcode[ctypes.get_errno()] if rc < 0 else "ok"))
print(" ".join(results))
"""


@linux_only
@needs_landlock
def test_linux_network_off_allows_unix_pairs_and_refuses_the_rest(tmp_path: Path) -> None:
    sandbox = Sandbox(SandboxSettings("workspace-write"), tmp_path)
    done = subprocess.run(
        [sys.executable, "-c", _SOCKET_PROBE],
        preexec_fn=sandbox.child_hook(),
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )
    assert done.stdout.split() == [
        "pair:x",
        "EPERM",
        "EPERM",
        "EPERM",
        "EPERM",
        "uring:EPERM",
    ], done.stderr


@linux_only
@needs_landlock
def test_linux_confinement_survives_exec_and_root(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A write-denied job stays denied for its whole tree, even running as root."""
    outside, work, temp = tmp_path / "outside", tmp_path / "work", tmp_path / "temp"
    for path in (outside, work, temp):
        path.mkdir()
    # tmp_path lives in the system temp dir, a writable root: move the temp root aside.
    monkeypatch.setenv("TMPDIR", str(temp))
    monkeypatch.setattr("tempfile.tempdir", None)
    sandbox = Sandbox(SandboxSettings("workspace-write", network=True), work)
    script = (
        f"echo in > {work}/a; echo out > {outside}/b; "
        f"sh -c 'echo nested > {outside}/c'; truncate -s 0 {work}/a; "
        f"ln -s /etc/passwd {outside}/d; mkdir {outside}/e; echo ok"
    )
    done = subprocess.run(
        ["/bin/sh", "-c", script],
        preexec_fn=sandbox.child_hook(),
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
        cwd=work,
    )
    assert done.stdout == "ok\n"
    assert os.listdir(outside) == []
    assert (work / "a").read_text() == ""
    assert done.stderr.count("Permission denied") == 4


@linux_only
def test_a_child_that_cannot_confine_itself_runs_nothing(tmp_path: Path) -> None:
    """Fail closed: the hook exits 126 with a message instead of exec'ing unconfined."""
    from pct_runtime.host.system.sandbox.linux import _fail_in_child

    def broken() -> None:
        ctypes.set_errno(errno.EPERM)
        _fail_in_child("landlock_restrict_self")

    done = subprocess.run(
        ["/bin/sh", "-c", f"echo ran > {tmp_path}/ran"],
        preexec_fn=broken,
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )
    assert done.returncode == 126
    assert "pct sandbox: landlock_restrict_self failed" in done.stderr
    assert not (tmp_path / "ran").exists()


@linux_only
@needs_landlock
async def test_a_server_that_cannot_confine_itself_spawns_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The in-namespace server exits before answering when Landlock fails (here: the fd it
    is handed is no ruleset), and the spawn is refused: nothing runs unconfined."""
    from pct_runtime.host.system.sandbox import linux
    from pct_runtime.host.system.sandbox.spawn import spawn_process

    null = os.open(os.devnull, os.O_RDONLY)
    real_init = linux.LinuxConfinement.__init__

    def no_ruleset(self: linux.LinuxConfinement, *args: object) -> None:
        real_init(self, *args)  # type: ignore[arg-type]
        self.fd = null

    monkeypatch.setattr(linux.LinuxConfinement, "__init__", no_ruleset)
    (tmp_path / "fresh").mkdir()
    sandbox = Sandbox(SandboxSettings("workspace-write"), tmp_path / "fresh")  # a new ruleset
    refusal = r"the sandbox could not be set up \(pct sandbox: landlock_add_rule.*; nothing ran"
    try:
        with pytest.raises(OSError, match=refusal) as caught:
            await spawn_process(sandbox, ["/bin/sh", "-c", f"echo ran > {tmp_path}/ran"])
    finally:
        os.close(null)
    assert caught.value.errno == errno.EPERM
    assert not (tmp_path / "ran").exists()


@linux_only
@needs_landlock
def test_self_test_catches_a_sandbox_that_is_not_enforced(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from pct_runtime.host.system.sandbox import linux

    assert linux.self_test(SandboxSettings("workspace-write")) is None

    class Unconfined:
        def popen(self, argv: list[str], **kwargs: object) -> subprocess.Popen[bytes]:
            return subprocess.Popen(argv, **kwargs)  # type: ignore[call-overload]

        def close(self) -> None:
            pass

    monkeypatch.setattr(linux.LinuxConfinement, "spawner", lambda self: Unconfined())
    reason = linux.self_test(SandboxSettings("workspace-write"))
    assert reason is not None
    assert "did not enforce it" in reason


@linux_only
@needs_landlock
async def test_spawned_jobs_report_exit_codes_and_signals(tmp_path: Path) -> None:
    from pct_runtime.host.system.sandbox.spawn import spawn_process

    sandbox = Sandbox(SandboxSettings("workspace-write"), tmp_path)
    done = await spawn_process(sandbox, ["/bin/sh", "-c", "exit 3"])
    assert await done.wait() == 3
    killed = await spawn_process(sandbox, ["/bin/sh", "-c", "kill -9 $$"])
    assert await killed.wait() == -9


_PROC_PROBE = """
ls /proc/{pid} >/dev/null 2>&1 && echo "sees pct"
for p in /proc/[0-9]*; do
  [ $p = /proc/$$ ] || [ $p = /proc/self ] && continue
  for f in $p/fd/*; do readlink $f >/dev/null 2>&1 && echo "opened $f"; done
done
python3 -c "import ctypes; print('ptrace', ctypes.CDLL(None).ptrace(16, 2, 0, 0))"
"""


@linux_only
@needs_landlock
def test_a_job_cannot_reach_pct_nor_the_sandbox_server(tmp_path: Path) -> None:
    """The job's PID namespace holds neither pct nor a descriptor of it; the server that
    spawns jobs is undumpable (its /proc fds are closed to them) and ptrace is refused."""
    from pct_runtime.host.system.sandbox.spawn import popen

    sandbox = Sandbox(SandboxSettings("workspace-write", network=True), tmp_path)
    out_r, out_w = os.pipe()
    script = _PROC_PROBE.format(pid=os.getpid())
    proc = popen(sandbox, ["/bin/sh", "-c", script], stdout=out_w, stderr=out_w)
    os.close(out_w)
    assert proc.wait(30) == 0
    with os.fdopen(out_r, "rb") as reader:
        report = reader.read().decode()
    assert "sees pct" not in report
    assert "opened" not in report
    assert "ptrace -1" in report


async def test_an_embedded_runtime_refuses_a_sandbox_it_cannot_enforce(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from pct_runtime.host.system import sandbox as sandbox_pkg
    from pct_runtime.host.system.sandbox import SandboxUnavailableError
    from pct_runtime.runtime import Runtime

    def no_landlock(settings: SandboxSettings, *, self_test: bool = True) -> str:
        return "Landlock is not available here"

    monkeypatch.setattr(sandbox_pkg, "unsupported_reason", no_landlock)
    runtime = Runtime(
        agent_dir=tmp_path, sandbox=SandboxSettings("workspace-write"), debug_stream=None
    )
    with pytest.raises(SandboxUnavailableError, match="Landlock is not available here"):
        await runtime.start()
    await runtime.aclose()


@linux_only
@needs_landlock
def test_pass_fds_keep_their_numbers_across_the_spawner(tmp_path: Path) -> None:
    """A child told its descriptor number in argv (the Code Mode zygote) finds it there."""
    from pct_runtime.host.system.sandbox.spawn import popen

    sandbox = Sandbox(SandboxSettings("read-only"), tmp_path)
    read_end, write_end = os.pipe()
    numbers = [write_end, os.dup(write_end), os.dup2(write_end, 200)]
    try:
        for fd in numbers:
            code = f"import os; os.write({fd}, b'via-{fd} ')"
            proc = popen(
                sandbox,
                [sys.executable, "-c", code],
                pass_fds=[fd],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
            assert proc.wait(30) == 0
        for fd in numbers:
            os.close(fd)
        got = b""
        while chunk := os.read(read_end, 1000):
            got += chunk
    finally:
        os.close(read_end)
    assert got.decode().split() == [f"via-{fd}" for fd in numbers]


def test_the_config_section_is_the_key_the_typo_check_knows() -> None:
    """policy spells "pct" itself (no config import on the CLI's start-up path)."""
    from pct_runtime.config.typos import PCT_SECTION
    from pct_runtime.host.system.sandbox.policy import CONFIG_SECTION

    assert CONFIG_SECTION[0] == PCT_SECTION


def test_pct_apply_patch_does_not_load_the_config_schema() -> None:
    """`pct apply-patch` stays light: its path through the CLI never imports pydantic."""
    import subprocess
    import sys

    probe = (
        "import sys, pct_runtime.cli, pct_runtime.cli_commands.apply_patch_cmd; "
        "print('pydantic' in sys.modules, 'pct_runtime.config.schema' in sys.modules)"
    )
    out = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True
    ).stdout
    assert out.split() == ["False", "False"]


def _failing_bwrap(tmp_path: Path) -> Path:
    """A `bwrap` that fails the way one without user namespaces does."""
    fake = tmp_path / "bin" / "bwrap"
    fake.parent.mkdir()
    fake.write_text(
        "#!/bin/sh\necho 'bwrap: setting up uid map: Permission denied' >&2\nexit 1\n",
        encoding="utf-8",
    )
    fake.chmod(0o755)
    return fake


@linux_only
def test_a_bwrap_that_cannot_run_is_refused_with_why_and_what_to_do(tmp_path: Path) -> None:
    from pct_runtime.host.system.sandbox import bwrap

    fake = _failing_bwrap(tmp_path)
    reason = bwrap.probe_failure(bwrap.Bwrap(str(fake), "system"), network=False)
    assert reason is not None
    assert str(fake) in reason
    assert "setting up uid map: Permission denied" in reason
    assert "user.max_user_namespaces" in reason
    assert "apparmor_restrict_unprivileged_userns" in reason
    missing = bwrap.probe_failure(None, network=False)
    assert missing is not None
    assert "not found" in missing
    assert "apt install bubblewrap" in missing


@linux_only
def test_the_system_bwrap_on_path_wins_over_the_bundled_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from pct_runtime.host.system.sandbox import bwrap

    fake = _failing_bwrap(tmp_path)
    monkeypatch.setenv("PATH", f"{fake.parent}{os.pathsep}{os.environ.get('PATH', '')}")
    found = bwrap.locate()
    assert found == bwrap.Bwrap(str(fake), "system")
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    bundled = bwrap.locate()
    assert bundled is not None
    assert bundled.origin == "bundled"


def test_the_namespace_layout_confines_what_landlock_cannot() -> None:
    from pct_runtime.host.system.sandbox import bwrap

    args = bwrap.layout((Path("/w"),), network=False, masks=(Path("/w/agent/pct"),), root_user=True)
    joined = " ".join(args)
    assert joined.startswith("--ro-bind / / --dev /dev --unshare-pid --proc /proc")
    assert "--unshare-net" in args
    assert "--bind-try /w /w" in joined
    # The mask comes after the writable binds, so it lies on top of them.
    assert joined.index("--tmpfs /w/agent/pct") > joined.index("/w /w")
    assert joined.index("--remount-ro /w/agent/pct") > joined.index("--tmpfs /w/agent/pct")
    assert "--die-with-parent" in args
    assert "--new-session" in args
    assert "--cap-drop ALL" in joined
    assert "--unshare-net" not in bwrap.layout((), network=True, root_user=False)
