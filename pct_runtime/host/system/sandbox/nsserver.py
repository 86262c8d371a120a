"""The spawner inside a sandbox's namespaces: one small process per ruleset, stdlib only.

pct starts it once behind `bwrap` (which has already applied the seccomp filter) as
`python -I -S nsserver.py CTRL RULESET FILE_WRITE TREE_WRITE`. It adds Landlock rules for
the sandbox's own devices (the private `/dev/pts` and `/dev/shm` are new inodes that pct
cannot name from outside), restricts itself to the ruleset, makes itself undumpable (a job
of the same uid can then neither read its memory nor open its descriptors through /proc)
and then only spawns: every job is a vfork-based `subprocess.Popen` from here, so a job
costs no bwrap set-up and no Python start-up of its own.

The control socket is a SOCK_SEQPACKET pair. A request is a JSON object with the job's
descriptors attached (`SCM_RIGHTS`); the answer is `{"pid": N}` with a pidfd of the child
(pct reads its own pid for it from that, then sends `{"ack": N}`) or `{"error": errno,
"message": text}`. When a child has exited and was acked, `{"exit": N, "code": returncode}`
follows. pct closing its end ends the server,
and with it (`--die-with-parent`) every process of the sandbox.
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import fcntl
import json
import os
import select
import signal
import socket
import struct
import subprocess
import sys

_SYS_ADD_RULE = 445
_SYS_RESTRICT_SELF = 446
_RULE_PATH_BENEATH = 1
_PR_SET_PDEATHSIG = 1
_PR_SET_DUMPABLE = 4
_PR_SET_NO_NEW_PRIVS = 38
_MAX_MESSAGE = 1 << 20
_MAX_FDS = 64
#: The sandbox's own devices: written like files (ttys) or as trees (POSIX shared memory).
_FILE_DEVICES = ("/dev/null", "/dev/zero", "/dev/full", "/dev/tty", "/dev/ptmx", "/dev/pts")
_TREE_DEVICES = ("/dev/shm",)

_libc = ctypes.CDLL(None, use_errno=True)
_libc.syscall.restype = ctypes.c_long


def _fail(what: str) -> None:
    err = ctypes.get_errno()
    os.write(2, f"pct sandbox: {what} failed ({os.strerror(err)})\n".encode())
    os._exit(126)


def _confine(ruleset: int, file_write: int, tree_write: int) -> None:
    for paths, access in ((_FILE_DEVICES, file_write), (_TREE_DEVICES, tree_write)):
        for path in paths:
            try:
                fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
            except OSError:
                continue
            attr = ctypes.create_string_buffer(struct.pack("=Qi", access, fd), 12)
            done = _libc.syscall(_SYS_ADD_RULE, ruleset, _RULE_PATH_BENEATH, attr, 0)
            os.close(fd)
            if done != 0:
                _fail(f"landlock_add_rule({path})")
    if _libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
        _fail("prctl(PR_SET_NO_NEW_PRIVS)")
    if _libc.syscall(_SYS_RESTRICT_SELF, ruleset, 0) != 0:
        _fail("landlock_restrict_self")
    os.close(ruleset)
    if _libc.prctl(_PR_SET_DUMPABLE, 0, 0, 0, 0) != 0:
        _fail("prctl(PR_SET_DUMPABLE)")


def _die_with_server() -> None:
    _libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)


def _spawn(
    request: dict[str, object], fds: list[int], sock: socket.socket
) -> tuple[subprocess.Popen[bytes], socket.socket]:
    """Spawn one request; every received descriptor is closed here, whatever happens.

    `pass_fds` keep their numbers (a child may be told its descriptor number in argv), so
    received copies are first lifted above every wanted number, then put in place.
    """
    live = list(fds)
    try:
        std = request["std"]
        targets = request["pass"]
        argv = request["argv"]
        if not (isinstance(std, list) and isinstance(targets, list) and isinstance(argv, list)):
            raise TypeError("std, pass and argv must be lists")
        wanted = {int(t) for t in targets}
        if sock.fileno() in wanted:
            moved = socket.socket(fileno=os.dup(sock.fileno()))
            sock.detach()  # its number is overwritten below, as a wanted one
            sock = moved
        base = max([*wanted, sock.fileno(), 2]) + 1
        lifted = [fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, base) for fd in fds]
        live.extend(lifted)
        for fd in fds:
            os.close(fd)
            live.remove(fd)
        used = sum(1 for i in std if isinstance(i, int) and i >= 0)
        streams = [lifted[i] if isinstance(i, int) and i >= 0 else None for i in std]
        for target, fd in zip(targets, lifted[used:], strict=True):
            os.dup2(fd, int(target), inheritable=False)
            live.append(int(target))
        env = request.get("env")
        cwd = request.get("cwd")
        child = subprocess.Popen(
            [str(a) for a in argv],
            stdin=streams[0],
            stdout=streams[1],
            stderr=streams[2],
            cwd=cwd if isinstance(cwd, str) else None,
            env=env if isinstance(env, dict) else None,
            start_new_session=bool(request.get("session")),
            pass_fds=[int(t) for t in targets],
            preexec_fn=_die_with_server if request.get("pdeathsig") else None,
        )
        return child, sock
    finally:
        for fd in set(live):
            with contextlib.suppress(OSError):
                os.close(fd)


def _send(sock: socket.socket, obj: dict[str, object], fds: list[int] | None = None) -> None:
    socket.send_fds(sock, [json.dumps(obj).encode()], fds or [])


class _Server:
    """The spawner's state between polls: the socket (it may move during a spawn), the
    children by pidfd, and the exits pct has not acked yet."""

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        self.poller = select.poll()
        self.poller.register(sock.fileno(), select.POLLIN)
        self.children: dict[int, subprocess.Popen[bytes]] = {}  # by pidfd
        # A child is reaped only once pct has read its pid from the pidfd (`ack`): the
        # kernel forgets the number of a reaped process.
        self.unacked: set[int] = set()
        self.exited: dict[int, int] = {}  # pid -> pidfd of an exited child not acked yet

    def reap(self, pidfd: int) -> None:
        child = self.children.pop(pidfd)
        os.close(pidfd)
        _send(self.sock, {"exit": child.pid, "code": child.wait()})

    def child_exited(self, pidfd: int) -> None:
        self.poller.unregister(pidfd)
        pid = self.children[pidfd].pid
        if pid in self.unacked:
            self.exited[pid] = pidfd
        else:
            self.reap(pidfd)

    def acked(self, ack: int | str) -> None:
        pid = int(ack)
        self.unacked.discard(pid)
        if pid in self.exited:
            self.reap(self.exited.pop(pid))

    def request(self) -> bool:
        """Answer one message; False when pct closed its end."""
        msg, fds, _flags, _addr = socket.recv_fds(self.sock, _MAX_MESSAGE, _MAX_FDS)
        if not msg:
            return False
        try:
            request = json.loads(msg)
            if not isinstance(request, dict):
                raise TypeError("a request is a JSON object")
            if "ack" in request:
                self.acked(request["ack"])
                return True
        except (ValueError, TypeError) as exc:
            for each in fds:
                os.close(each)
            _send(self.sock, {"error": errno.EINVAL, "message": f"bad request: {exc}"})
            return True
        self.spawn(request, list(fds))
        return True

    def spawn(self, request: dict[str, object], fds: list[int]) -> None:
        old = self.sock.fileno()
        try:
            child, self.sock = _spawn(request, fds, self.sock)
        except OSError as exc:
            _send(self.sock, {"error": exc.errno or errno.EIO, "message": str(exc)})
            return
        except (ValueError, KeyError, TypeError) as exc:
            _send(self.sock, {"error": errno.EINVAL, "message": f"bad request: {exc}"})
            return
        finally:
            if self.sock.fileno() != old:
                self.poller.unregister(old)
                self.poller.register(self.sock.fileno(), select.POLLIN)
        pidfd = os.pidfd_open(child.pid)
        self.children[pidfd] = child
        self.unacked.add(child.pid)
        self.poller.register(pidfd, select.POLLIN)
        _send(self.sock, {"pid": child.pid}, [pidfd])


def serve(sock: socket.socket) -> None:
    server = _Server(sock)
    while True:
        try:
            events = server.poller.poll()
        except InterruptedError:
            continue
        for fd, _event in events:
            if fd in server.children:
                server.child_exited(fd)
            elif fd == server.sock.fileno() and not server.request():
                return
            # else: the socket moved during a spawn; its new number is registered


def main(argv: list[str]) -> None:
    ctrl, ruleset, file_write, tree_write = (int(a) for a in argv)
    _confine(ruleset, file_write, tree_write)
    sock = socket.socket(fileno=ctrl)
    null = os.open(os.devnull, os.O_RDWR)
    sock.sendall(b"R")
    for fd in (0, 1, 2):
        os.dup2(null, fd)
    os.close(null)
    serve(sock)


if __name__ == "__main__":
    main(sys.argv[1:])
