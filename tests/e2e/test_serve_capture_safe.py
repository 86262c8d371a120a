"""Through a real `pct serve`: no job can redirect where pct writes or what its sweeps delete.

A job runs as the same user as the server, so it can rename anything in its writable roots.
These tests play that job (through `exec_command`, or a hostile thread exchanging folders with
`renameat2(RENAME_EXCHANGE)`) and check that pct never creates or deletes a file outside its
own capture folders; then that nothing of pct's is left in /proc or the temp dir when a
session ends or the server is killed mid-call. Each test runs as the runner's user and, when
the runner is root, once more as an unprivileged user (`setpriv`).
"""

from __future__ import annotations

import contextlib
import ctypes
import functools
import os
import platform
import re
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from pct_procs import PCT, StdioServer, serving, stop, write_config

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.skipif(not sys.platform.startswith("linux"), reason="needs /proc"),
]

MARK = "PCT_CAPTURE_TEST_MARK"
NOBODY = 65534
RECOVERY = re.compile(r"stdout recovery: [a-z]+(?: \([a-z-]+\))? — (\S+) \[")
SETPRIV = shutil.which("setpriv")


@dataclass
class Box:
    """One test's private tree: agent dir, work dir, OS temp dir, runtime dir, a victim."""

    base: Path
    prefix: list[str]
    uid: int
    mark: str = field(default_factory=lambda: uuid.uuid4().hex)
    no_watchdog: str | None = None  # why the server cannot start its lifeline watchdog

    def needs_watchdog(self) -> None:
        if self.no_watchdog is not None:
            pytest.skip(self.no_watchdog)

    @property
    def agent(self) -> Path:
        return self.base / "agent"

    @property
    def work(self) -> Path:
        return self.base / "work"

    @property
    def temp(self) -> Path:
        return self.base / "tmp"

    @property
    def run(self) -> Path:
        return self.base / "run"

    @property
    def outside(self) -> Path:
        return self.base / "outside"

    @property
    def root(self) -> Path:
        return self.run / "pct"

    def env(self) -> dict[str, str]:
        return {
            "XDG_RUNTIME_DIR": str(self.run),
            "TMPDIR": str(self.temp),
            "HOME": str(self.base),
            MARK: self.mark,
        }

    def serving(self) -> contextlib.AbstractContextManager[StdioServer]:
        return serving(self.agent, self.work, prefix=self.prefix, **self.env())

    def server(self) -> StdioServer:
        return StdioServer(self.agent, self.work, prefix=self.prefix, **self.env())

    def give_away(self) -> None:
        """Hand every file made so far to the box's user (no-op when it is the runner)."""
        if self.uid == os.geteuid():
            return
        for dirpath, dirnames, filenames in os.walk(self.base):
            os.chown(dirpath, self.uid, self.uid)
            for name in dirnames + filenames:
                os.chown(os.path.join(dirpath, name), self.uid, self.uid, follow_symlinks=False)


def _as_nobody(what: str, *argv: str) -> str | None:
    """None when `argv` runs as nobody, else why not (`what` says what it tried)."""
    if os.geteuid() != 0:
        return "the runner is not root: it cannot drop to another user"
    if SETPRIV is None:
        return "setpriv is not installed"
    drop = [SETPRIV, "--reuid", str(NOBODY), "--regid", str(NOBODY), "--clear-groups"]
    probe = subprocess.run(
        [*drop, *argv], capture_output=True, cwd=tempfile.gettempdir(), timeout=30
    )
    if probe.returncode != 0:
        last = (probe.stderr.decode().strip().splitlines() or ["?"])[-1]
        return f"as uid {NOBODY}, {what} fails: {last}"
    return None


@functools.cache
def _drop_privileges_works() -> tuple[str | None, str | None]:
    """(why pct cannot serve as nobody, why its watchdog cannot start): None when it can.

    The watchdog is `sys.executable` run again by the server; a Python whose real path
    (e.g. under a 0700 home) another user cannot reach runs once through `setpriv` but
    cannot start itself again."""
    serve = _as_nobody("running pct", PCT, "-h")
    if serve is not None:
        return serve, serve
    code = "import os, sys; os.execv(sys.executable, [sys.executable, '-c', ''])"
    return None, _as_nobody(f"{sys.executable} starting itself again", sys.executable, "-c", code)


@pytest.fixture(params=["runner", "nobody"])
def box(request: pytest.FixtureRequest) -> Iterator[Box]:
    if request.param == "nobody":
        why, no_watchdog = _drop_privileges_works()
        if why is not None:
            pytest.skip(why)
        uid = NOBODY
        prefix = [SETPRIV or "setpriv", "--reuid", str(uid), "--regid", str(uid), "--clear-groups"]
    else:
        uid, prefix, no_watchdog = os.geteuid(), [], None
    # Not under pytest's tmp_path: another user must be able to reach it.
    base = Path(tempfile.mkdtemp(prefix="pct-capture-test-"))
    out = Box(base, prefix, uid, no_watchdog=no_watchdog)
    try:
        out.work.mkdir()
        out.temp.mkdir()
        out.run.mkdir(mode=0o700)
        out.outside.mkdir()
        write_config(out.agent, {"shellSessions": {"enabled": True}})
        out.give_away()
        yield out
    finally:
        kill_marked(out.mark)
        shutil.rmtree(base, ignore_errors=True)


def marked(mark: str) -> list[int]:
    """Live (non-zombie) processes whose environment carries `MARK=mark`."""
    needle = f"{MARK}={mark}".encode()
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/environ", "rb") as fh:
                environ = fh.read()
            with open(f"/proc/{name}/stat", "rb") as fh:
                state = fh.read().rsplit(b")", 1)[1].split()[0]
        except (OSError, IndexError):
            continue
        if needle in environ.split(b"\0") and state not in (b"Z", b"X"):
            found.append(int(name))
    return found


def kill_marked(mark: str) -> None:
    for pid in marked(mark):
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)


def holders(base: Path) -> list[str]:
    """Every process that holds a descriptor or its cwd under `base` (the watchdog holds the
    capture root's), as `pid:link`."""
    prefix = str(base)
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit() or int(name) == os.getpid():
            continue
        links = [f"/proc/{name}/cwd"]
        with contextlib.suppress(OSError):
            links += [f"/proc/{name}/fd/{fd}" for fd in os.listdir(f"/proc/{name}/fd")]
        for link in links:
            with contextlib.suppress(OSError):
                target = os.readlink(link)
                if target == prefix or target.startswith(prefix + "/"):
                    found.append(f"{name}:{target}")
    return found


def files_under(path: Path) -> list[Path]:
    return sorted(p for p in path.rglob("*") if not p.is_dir() or p.is_symlink())


def recovery_path(text: str) -> Path:
    found = RECOVERY.search(text)
    assert found, text
    return Path(found.group(1))


def wait_until(check: Callable[[], object], seconds: float = 15.0) -> None:
    deadline = time.monotonic() + seconds
    while not check() and time.monotonic() < deadline:
        time.sleep(0.05)


# -- where the files are, and how private ---------------------------------------------------


def test_recovery_files_live_in_the_runtime_dir_0700_and_0600(box: Box) -> None:
    with box.serving() as server:
        text = server.call("exec_command", {"cmd": "sleep 30", "yield_time_ms": 200})
        path = recovery_path(text)
        assert path.parent.parent == box.root, text
        assert path.parent.name.startswith("pct-output-")
        for folder in (box.root, path.parent):
            st = folder.lstat()
            assert stat.S_ISDIR(st.st_mode)
            assert (stat.S_IMODE(st.st_mode), st.st_uid) == (0o700, box.uid), folder
        st = path.lstat()
        assert stat.S_ISREG(st.st_mode)
        assert (stat.S_IMODE(st.st_mode), st.st_uid) == (0o600, box.uid)
        assert list(box.temp.iterdir()) == []  # nothing of pct's in a job's writable temp


# -- a job swaps the folder for a symlink -----------------------------------------------------


@pytest.mark.parametrize("level", ["folder", "root"])
def test_a_swapped_capture_folder_never_makes_pct_write_outside(box: Box, level: str) -> None:
    with box.serving() as server:
        first = recovery_path(
            server.call("exec_command", {"cmd": "sleep 30", "yield_time_ms": 200})
        )
        folder, root = first.parent, first.parent.parent
        if level == "folder":  # the session's folder becomes a link to the victim
            moved = Path(f"{folder}.moved")
            attack = f"mv '{folder}' '{moved}' && ln -s '{box.outside}' '{folder}'"
        else:  # the folder's parent does, with a same-named folder waiting there
            moved = Path(f"{root}.moved") / folder.name
            attack = (
                f"mv '{root}' '{root}.moved' && mkdir '{box.outside}/{folder.name}'"
                f" && ln -s '{box.outside}' '{root}'"
            )
        swapped = server.call("exec_command", {"cmd": f"{attack} && echo swapped"})
        assert "swapped" in swapped, swapped
        text = server.call("exec_command", {"cmd": "sleep 30", "yield_time_ms": 200})
        second = recovery_path(text)
        assert files_under(box.outside) == []
        # pct went on writing in its own folder, wherever the job moved it, and says the
        # shown path no longer leads there.
        assert (moved / second.name).is_file()
        assert "stdout recovery: partial (missing)" in text, text
    assert files_under(box.outside) == []


# -- a hostile process races the sweeps with RENAME_EXCHANGE ---------------------------------

_RENAMEAT2 = 316  # x86_64
_AT_FDCWD = -100
_RENAME_EXCHANGE = 2


def _exchanger() -> ctypes._CFuncPtr | None:  # type: ignore[name-defined]
    if platform.machine() != "x86_64":
        return None
    libc = ctypes.CDLL(None, use_errno=True)
    fn: ctypes._CFuncPtr = libc.syscall  # type: ignore[name-defined]
    return fn


def exchange(a: Path, b: Path) -> bool:
    fn = _exchanger()
    assert fn is not None
    return fn(_RENAMEAT2, _AT_FDCWD, bytes(a), _AT_FDCWD, bytes(b), _RENAME_EXCHANGE) == 0


def _needs_exchange(where: Path) -> None:
    if _exchanger() is None:
        pytest.skip("renameat2 is called by its x86_64 syscall number only")
    a, b = where / "probe-a", where / "probe-b"
    a.mkdir()
    b.mkdir()
    try:
        if not exchange(a, b):
            pytest.skip(f"RENAME_EXCHANGE unsupported here (errno {ctypes.get_errno()})")
    finally:
        a.rmdir()
        b.rmdir()


VICTIM = "victim.marker"  # not a `.txt`: no sweep ever removes it


def restore(pairs: list[tuple[Path, Path]]) -> None:
    """Put back each pair the race left exchanged."""
    for a, b in pairs:
        if (a / VICTIM).exists():
            assert exchange(a, b)


def victim(box: Box, name: str, same_names: tuple[str, ...] = ()) -> Path:
    """An outside folder of the box's user with `*.txt` files a sweep must never touch,
    some named like recovery files (`same_names`: exactly like those of a pct folder)."""
    path = box.outside / name
    path.mkdir()
    (path / VICTIM).write_text("", encoding="utf-8")
    (path / "notes.txt").write_text("keep", encoding="utf-8")
    for file in (f"{uuid.uuid4()}.txt", *same_names):
        (path / file).write_text("keep, even named like a recovery file", encoding="utf-8")
    return path


# The hostile job: its own process (no GIL shared with the test), as the box's user.
RACE = """
import ctypes, os, sys, time
syscall = ctypes.CDLL(None, use_errno=True).syscall
stop, deadline = sys.argv[1], time.monotonic() + float(sys.argv[2])
pairs = [(a.encode(), b.encode()) for a, b in zip(sys.argv[3::2], sys.argv[4::2])]
count = 0
while time.monotonic() < deadline and not os.path.exists(stop):
    for _ in range(100):
        for a, b in pairs:
            count += syscall(NR, AT_FDCWD, a, AT_FDCWD, b, RENAME_EXCHANGE) == 0
print(count, flush=True)
""".replace("NR", str(_RENAMEAT2)).replace("AT_FDCWD", str(_AT_FDCWD))
RACE = RACE.replace("RENAME_EXCHANGE", str(_RENAME_EXCHANGE))


class Racer:
    """A process exchanging each (pct folder, victim) pair until stopped (bounded)."""

    def __init__(self, box: Box, pairs: list[tuple[Path, Path]], seconds: float = 20.0) -> None:
        self._stop = box.base / "stop-racing"
        argv = [str(p) for pair in pairs for p in pair]
        self._proc = subprocess.Popen(
            [*box.prefix, sys.executable, "-c", RACE, str(self._stop), str(seconds), *argv],
            stdout=subprocess.PIPE,
            text=True,
        )
        self.exchanges = 0

    def __enter__(self) -> Racer:
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.touch()
        out, _ = self._proc.communicate(timeout=60)
        self.exchanges = int(out.strip() or 0)
        self._stop.unlink()


def stale_folder(parent: Path, uid: int) -> Path:
    """A capture folder of a runtime that is gone: dead pid, made-up start time."""
    gone = subprocess.Popen(["true"])
    gone.wait()
    path = parent / f"pct-output-{gone.pid}-12345-{uuid.uuid4().hex[:8]}"
    path.mkdir(mode=0o700)
    for _ in range(20):
        (path / f"{uuid.uuid4()}.txt").write_text("old output", encoding="utf-8")
    if uid != os.geteuid():
        for item in (path, *path.iterdir()):
            os.chown(item, uid, uid)
    return path


def test_the_start_up_sweep_never_deletes_outside_under_rename_exchange(box: Box) -> None:
    _needs_exchange(box.outside)
    box.root.mkdir(mode=0o700)
    if box.uid != os.geteuid():
        os.chown(box.root, box.uid, box.uid)
    # Stale folders where this version sweeps (the capture root) and where older ones did.
    pairs = []
    for parent in (box.root, box.temp):
        for i in range(10):
            pairs.append((stale_folder(parent, box.uid), victim(box, f"{parent.name}-{i}")))
    box.give_away()
    kept = files_under(box.outside)
    with Racer(box, pairs) as racer, box.serving() as server:
        server.call("exec_command", {"cmd": "true"})
    assert racer.exchanges > 0
    restore(pairs)
    assert files_under(box.outside) == kept
    # Without the race the next start-up removes every stale folder of the capture root.
    with box.serving() as server:
        server.call("exec_command", {"cmd": "true"})
    assert [p for p in box.root.iterdir() if p.name.startswith("pct-output-")] == []
    assert files_under(box.outside) == kept


def test_the_lifeline_sweep_never_deletes_outside_under_rename_exchange(box: Box) -> None:
    box.needs_watchdog()
    _needs_exchange(box.outside)
    server = box.server()
    try:
        server.initialize()
        names = []
        for _ in range(16):  # a longer sweep: more chances for the race
            text = server.call("exec_command", {"cmd": "sleep 300", "yield_time_ms": 50})
            names.append(recovery_path(text).name)
        folder = recovery_path(text).parent
        pairs = [(folder, victim(box, "lifeline", tuple(names)))]
        box.give_away()
        kept = files_under(box.outside)
        with Racer(box, pairs, seconds=5.0) as racer:
            time.sleep(0.05)
            os.kill(server.proc.pid, signal.SIGKILL)  # the watchdog sweeps now
            server.proc.wait(10)
            wait_until(lambda: not marked(box.mark) and not holders(box.base), 10.0)
        assert racer.exchanges > 0
        restore(pairs)
        assert files_under(box.outside) == kept
        assert marked(box.mark) == []
    finally:
        stop(server.proc)


# -- nothing of pct's is left behind ----------------------------------------------------------


def _leftovers(box: Box) -> list[str]:
    out = [f"process {pid}" for pid in marked(box.mark)]
    out += [f"holds {link}" for link in holders(box.base)]
    out += [f"temp {p.name}" for p in box.temp.iterdir()]
    if box.root.exists():
        out += [f"capture root {p.name}" for p in box.root.iterdir()]
    out += [f"agent {p}" for p in (box.agent / "pct" / "output",) if p.exists()]
    return out


def test_a_session_that_ends_leaves_nothing_behind(box: Box) -> None:
    box.needs_watchdog()
    with box.serving() as server:
        text = server.call("exec_command", {"cmd": "sleep 300", "yield_time_ms": 200})
        assert recovery_path(text).is_file()
        server.call("exec_command", {"cmd": "seq 1 100000", "yield_time_ms": 5000})
        assert server.proc.stdin is not None
        server.proc.stdin.close()  # the client goes away: the session ends
        assert server.proc.wait(20) == 0
    wait_until(lambda: not _leftovers(box))
    assert _leftovers(box) == []
    assert box.root.is_dir()  # the root itself stays, empty, for the next server


def test_sigkill_mid_call_leaves_only_what_the_lifeline_sweeps(box: Box) -> None:
    box.needs_watchdog()
    server = box.server()
    try:
        server.initialize()
        server.call("exec_command", {"cmd": "sleep 300", "yield_time_ms": 200})
        args = {"cmd": "echo mid; sleep 300", "yield_time_ms": 30_000}
        server.send(
            {
                "jsonrpc": "2.0",
                "id": 999,
                "method": "tools/call",
                "params": {"name": "exec_command", "arguments": args},
            }
        )
        wait_until(lambda: len(marked(box.mark)) >= 3)  # the server and both jobs
        os.kill(server.proc.pid, signal.SIGKILL)
        server.proc.wait(10)
        wait_until(lambda: not _leftovers(box))
        assert _leftovers(box) == []
    finally:
        stop(server.proc)
