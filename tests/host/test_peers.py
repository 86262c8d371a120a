"""`host.system.peers`: which local peer of a TCP connection sits inside a sandbox."""

from __future__ import annotations

import os
import socket
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TypeVar

import pytest

from pct_runtime.host.system import peers
from pct_runtime.host.system.sandbox import Sandbox, SandboxSettings

_T = TypeVar("_T")

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


#: Connects to the port in argv, says so, then holds the connection until stdin closes.
_CLIENT = (
    "import socket,sys; s=socket.create_connection(('127.0.0.1', int(sys.argv[1])));"
    "print('connected', flush=True); sys.stdin.read()"
)


@pytest.fixture
def listener() -> Iterator[socket.socket]:
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(4)
    try:
        yield server
    finally:
        server.close()


def _verdict(conn: socket.socket) -> bool:
    return peers.sandboxed_peer(conn.getpeername(), conn.getsockname())


def _own_verdict(listener: socket.socket) -> bool:
    """The verdict on a connection this process makes to `listener`."""
    with socket.create_connection(listener.getsockname()):
        conn, _ = listener.accept()
        with conn:
            return _verdict(conn)


class _Held:
    """A child that says a line when ready and runs until its stdin closes (plain pipes:
    the sandbox spawner takes descriptors, not PIPE)."""

    def __init__(self, sandbox: Sandbox | None, argv: list[str], pass_fds: tuple[int, ...]):
        from pct_runtime.host.system.sandbox.spawn import popen

        in_r, self._in_w = os.pipe()
        out_r, out_w = os.pipe()
        try:
            self.proc = popen(sandbox, argv, stdin=in_r, stdout=out_w, pass_fds=pass_fds)
        finally:
            os.close(in_r)
            os.close(out_w)
        self._out = os.fdopen(out_r, "rb")

    def ready(self) -> str:
        return self._out.readline().decode().strip()

    def close(self) -> None:
        os.close(self._in_w)
        self._out.close()
        self.proc.wait(30)


def _quick(conn: socket.socket) -> bool | None:
    return peers.quick_sandboxed_peer(conn.getpeername(), conn.getsockname())


def _client_verdict(
    listener: socket.socket,
    sandbox: Sandbox | None,
    judge: Callable[[socket.socket], _T] = _verdict,  # type: ignore[assignment]
) -> _T:
    """`judge` of the connection a child process (in `sandbox`, if any) makes to `listener`."""
    port = str(listener.getsockname()[1])
    held = _Held(sandbox, [sys.executable, "-c", _CLIENT, port], ())
    try:
        assert held.ready() == "connected"
        conn, _ = listener.accept()
        with conn:
            return judge(conn)
    finally:
        held.close()


def _shared_verdict(
    listener: socket.socket, sandbox: Sandbox, judge: Callable[[socket.socket], _T]
) -> _T:
    """`judge` of a connection this process makes and shares with a child in `sandbox`."""
    with socket.create_connection(listener.getsockname()) as mine:
        conn, _ = listener.accept()
        argv = [sys.executable, "-c", "import sys; print('up', flush=True); sys.stdin.read()"]
        holder = _Held(sandbox, argv, (mine.fileno(),))
        try:
            assert holder.ready() == "up"
            return judge(conn)
        finally:
            holder.close()
            conn.close()


def test_proc_spelling_of_addresses() -> None:
    table, key = peers._proc_address("127.0.0.1", 8080)
    assert table == "tcp"
    assert key == ("0100007F" if sys.byteorder == "little" else "7F000001") + ":1F90"
    assert peers._proc_address("::ffff:127.0.0.1", 80) == peers._proc_address("127.0.0.1", 80)
    table6, key6 = peers._proc_address("::1", 1)
    assert table6 == "tcp6"
    assert key6.endswith(":0001")
    assert len(key6) == 32 + 5


def test_status_filter_count() -> None:
    assert peers.seccomp_filters("Seccomp:\t2\nSeccomp_filters:\t3\n") == 3
    assert peers.seccomp_filters("Seccomp:\t0\n") == 0


@linux_only
def test_an_unsandboxed_client_is_served(listener: socket.socket) -> None:
    assert _client_verdict(listener, None) is False


@linux_only
def test_our_own_connection_is_served(listener: socket.socket) -> None:
    assert _own_verdict(listener) is False


@linux_only
@needs_landlock
def test_a_sandboxed_client_with_network_is_refused(
    listener: socket.socket, tmp_path: Path
) -> None:
    sandbox = Sandbox(SandboxSettings("workspace-write", network=True), tmp_path)
    assert _client_verdict(listener, sandbox) is True


@linux_only
@needs_landlock
def test_a_socket_shared_with_a_sandboxed_process_is_refused(
    listener: socket.socket, tmp_path: Path
) -> None:
    """Any sandboxed holder refuses the connection, even beside an unsandboxed one."""
    sandbox = Sandbox(SandboxSettings("workspace-write", network=True), tmp_path)
    assert _shared_verdict(listener, sandbox, _verdict) is True


@linux_only
def test_a_socket_nobody_holds_is_refused(listener: socket.socket) -> None:
    """A socket passed in flight (held by no process) while the check runs is refused."""
    import array

    left, right = socket.socketpair()
    with left, right:
        client = socket.create_connection(listener.getsockname())
        conn, _ = listener.accept()
        with conn:
            fds = array.array("i", [client.fileno()])
            left.sendmsg([b"x"], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, fds)])
            client.close()  # only the message in flight holds it now
            assert _verdict(conn) is True
            _, ancdata, _, _ = right.recvmsg(1, socket.CMSG_LEN(4))
            back = array.array("i", ancdata[0][2][:4])[0]
            assert _verdict(conn) is False
            os.close(back)


def test_a_peer_not_on_this_machine_is_left_to_the_token() -> None:
    assert peers.sandboxed_address(("192.0.2.1", 40000), ("127.0.0.1", 1)) is False


@linux_only
def test_sock_diag_and_the_proc_table_agree(listener: socket.socket) -> None:
    with socket.create_connection(listener.getsockname()) as mine:
        conn, _ = listener.accept()
        with conn:
            peer, local = conn.getpeername(), conn.getsockname()
            by_diag = peers._find_by_diag(peer, local)
            assert by_diag == (os.getuid(), os.fstat(mine.fileno()).st_ino)
            assert peers._find_in_table(peer, local) == by_diag
            assert peers._find_by_diag(("127.0.0.1", 1), local) is None


def _has_ipv6_loopback() -> bool:
    try:
        with socket.socket(socket.AF_INET6) as probe:
            probe.bind(("::1", 0))
    except OSError:
        return False
    return True


@linux_only
@pytest.mark.skipif(not _has_ipv6_loopback(), reason="no IPv6 loopback here")
def test_an_ipv6_loopback_peer_is_found() -> None:
    with socket.socket(socket.AF_INET6) as server:
        server.bind(("::1", 0))
        server.listen(1)
        with socket.create_connection(server.getsockname()[:2]) as mine:
            conn, _ = server.accept()
            with conn:
                peer, local = conn.getpeername()[:2], conn.getsockname()[:2]
                expected = (os.getuid(), os.fstat(mine.fileno()).st_ino)
                assert peers._find_by_diag(peer, local) == expected
                assert peers._find_in_table(peer, local) == expected
                assert _verdict(conn) is False


#: Holds N dups of its stdin until stdin closes.
_FAT = (
    "import os, sys; held = [os.dup(0) for _ in range(int(sys.argv[1]))];"
    "print('held', flush=True); sys.stdin.read()"
)


@linux_only
def test_a_process_with_many_descriptors_is_not_read_for_others(
    listener: socket.socket, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The holder search reads processes fewest descriptors first and stops at the first
    holder: a job holding thousands of descriptors costs nothing to other connections."""
    import resource
    import subprocess

    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    count = min(5000, soft - 64)
    fat = subprocess.Popen(
        [sys.executable, "-c", _FAT, str(count)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert fat.stdout is not None
        assert fat.stdout.readline().strip() == "held"
        real = os.readlink
        read_in: dict[str, int] = {}

        def counting(path: str, *, dir_fd: int | None = None) -> str:
            if dir_fd is not None:
                where = real(f"/proc/self/fd/{dir_fd}")
                read_in[where] = read_in.get(where, 0) + 1
            return real(path, dir_fd=dir_fd)

        monkeypatch.setattr(peers.os, "readlink", counting)
        monkeypatch.setattr(peers, "_last_holder", fat.pid)  # too big to be read first
        assert _client_verdict(listener, None) is False  # another process, still found
        with socket.create_connection(listener.getsockname()) as mine:
            conn, _ = listener.accept()
            with conn:
                assert _verdict(conn) is False
            mine.close()
        assert read_in.get(f"/proc/{fat.pid}/fd", 0) == 0
    finally:
        assert fat.stdin is not None
        fat.stdin.close()
        fat.wait(30)
        if fat.stdout is not None:
            fat.stdout.close()


@linux_only
def test_the_last_holder_is_read_first_and_no_scan_is_made(
    listener: socket.socket, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A client that reconnects (the MCP SDK opens a connection per request) is found
    without listing every process."""
    assert _own_verdict(listener) is False
    assert peers._last_holder == os.getpid()

    def no_scan(uid: int) -> list[int]:
        raise AssertionError("the last holder was not read first")

    monkeypatch.setattr(peers, "_processes", no_scan)
    assert _own_verdict(listener) is False


@linux_only
@needs_landlock
def test_a_sandboxed_client_is_refused_whoever_held_the_last_connection(
    listener: socket.socket, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The last holder is only where the search starts: a new peer that it does not hold
    is looked for among every process, and a sandboxed one is refused."""
    monkeypatch.setattr(peers, "_last_holder", os.getpid())
    sandbox = Sandbox(SandboxSettings("workspace-write", network=True), tmp_path)
    assert _client_verdict(listener, sandbox) is True
    assert peers._last_holder != os.getpid()


@linux_only
def test_the_quick_answer_is_given_only_for_the_last_holder(listener: socket.socket) -> None:
    """A reconnect from the last holder is answered on the spot; a connection the last
    holder does not hold is left to the full check (None)."""
    assert _own_verdict(listener) is False
    with socket.create_connection(listener.getsockname()):
        conn, _ = listener.accept()
        with conn:
            assert _quick(conn) is False
    assert _client_verdict(listener, None, _quick) is None


@linux_only
@needs_landlock
def test_the_quick_answer_refuses_a_sandboxed_holder_and_a_shared_socket(
    listener: socket.socket, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Quick or not, a sandboxed holder refuses: the last holder itself, or a sandboxed
    descendant of it that holds the same socket."""
    sandbox = Sandbox(SandboxSettings("workspace-write", network=True), tmp_path)
    # the full check first (which makes the client the last holder), then the quick one
    both = _client_verdict(listener, sandbox, lambda conn: (_verdict(conn), _quick(conn)))
    assert both == (True, True)
    monkeypatch.setattr(peers, "_last_holder", os.getpid())
    assert _shared_verdict(listener, sandbox, _quick) is True


@linux_only
def test_the_guessed_descriptor_is_read_first_and_a_wrong_guess_falls_back(
    listener: socket.socket, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Where the last socket was found is read before the fd directory is listed; a guess
    that names another descriptor costs one readlink and the listing finds the socket."""
    with socket.create_connection(listener.getsockname()) as mine:
        conn, _ = listener.accept()
        with conn:
            target = os.readlink(f"/proc/self/fd/{mine.fileno()}")
            listed: list[int] = []
            real = os.listdir

            def counting(path: int | str = ".") -> list[str]:
                listed.append(1)
                return real(path)

            monkeypatch.setattr(peers.os, "listdir", counting)
            found = peers._holding(os.getpid(), target, str(mine.fileno()))
            assert found is not None
            assert found[1] == str(mine.fileno())
            assert listed == []
            found = peers._holding(os.getpid(), target, str(conn.fileno()))
            assert found is not None
            assert found[1] == str(mine.fileno())
            assert listed == [1]
        mine.close()
