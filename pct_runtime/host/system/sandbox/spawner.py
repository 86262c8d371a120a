"""pct's side of a sandbox's spawner: the `bwrap` namespaces and the server inside them.

One `NamespaceSpawner` per ruleset starts `bwrap … python -I -S nsserver.py` once (bwrap
applies the seccomp filter before that exec; the server applies Landlock to itself) and then
asks it for every job over a SOCK_SEQPACKET pair, sending the job's descriptors with
`SCM_RIGHTS`. So a job costs one round trip and one vfork, not a bwrap set-up and a Python
start-up.

Pids: the server answers with a pidfd of each child, and pct reads the child's pid in its
own namespace from `/proc/self/fdinfo` — the number it signals, watches (lifeline) and sees
in its /proc. Exit codes come from the server, which is the children's parent; a reader
thread delivers them. If the server dies (a job may kill it: it is in the same uid and
namespace), every process it started is dead too (the PID namespace ends with it) and the
next spawn starts a new one.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import threading
from collections import deque
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Union

from pct_runtime.host.system.procs import pidfd_pid

SERVER_SCRIPT = Path(__file__).with_name("nsserver.py")
_STD_STREAMS = ("stdin", "stdout", "stderr")
_START_TIMEOUT = 15.0
_MAX_MESSAGE = 1 << 16


Reply = Union["ConfinedPopen", dict[str, object]]


def _result(reply: Reply) -> ConfinedPopen:
    if isinstance(reply, ConfinedPopen):
        return reply
    code = reply.get("error")
    raise OSError(code if isinstance(code, int) else errno.EIO, str(reply.get("message")))


def _settle(future: asyncio.Future[Reply], reply: Reply) -> None:
    if not future.done():
        future.set_result(reply)


class ConfinedPopen:
    """A process the sandbox server started: `subprocess.Popen`'s pid, poll, wait and kill.

    `pid` is the pid in pct's namespace. The pidfd keeps signals from reaching a reused pid.
    """

    def __init__(self, pid: int, pidfd: int) -> None:
        self.pid = pid
        self._pidfd: int | None = pidfd
        self.returncode: int | None = None
        self._done = threading.Event()
        self._lock = threading.Lock()
        self._callbacks: list[Callable[[int], None]] = []

    def _exited(self, code: int) -> None:
        with self._lock:
            self.returncode = code
            callbacks, self._callbacks = self._callbacks, []
            pidfd, self._pidfd = self._pidfd, None
        if pidfd is not None:
            os.close(pidfd)
        self._done.set()
        for callback in callbacks:
            with contextlib.suppress(RuntimeError):  # a waiter's event loop already closed
                callback(code)

    def on_exit(self, callback: Callable[[int], None]) -> None:
        """Call `callback(returncode)` once the process has exited (now, if it has)."""
        with self._lock:
            code = self.returncode
            if code is None:
                self._callbacks.append(callback)
                return
        callback(code)

    def poll(self) -> int | None:
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        if not self._done.wait(timeout):
            raise subprocess.TimeoutExpired("sandboxed process", timeout or 0)
        assert self.returncode is not None
        return self.returncode

    def send_signal(self, sig: int) -> None:
        with self._lock:
            if self._pidfd is None:
                return
            with contextlib.suppress(ProcessLookupError):
                signal.pidfd_send_signal(self._pidfd, sig)

    def kill(self) -> None:
        self.send_signal(signal.SIGKILL)


class NamespaceSpawner:
    """Starts jobs inside one sandbox's namespaces; `failure` says why it cannot."""

    def __init__(
        self,
        bwrap_argv: Sequence[str],
        seccomp_program: bytes,
        ruleset_fd: int,
        access: tuple[int, int],
    ) -> None:
        self._bwrap_argv = list(bwrap_argv)
        self._program = seccomp_program
        self._ruleset_fd = ruleset_fd
        self._access = access
        self._lock = threading.Lock()
        self._sock: socket.socket | None = None
        self._proc: subprocess.Popen[bytes] | None = None
        # One waiter per request sent, in order: the server answers in the order it reads.
        self._waiters: deque[Callable[[Reply], None]] = deque()
        self._wait_lock = threading.Lock()
        self._children: dict[int, ConfinedPopen] = {}
        self._generation = 0
        self.failure: str | None = None

    # -- the server ------------------------------------------------------------------------
    def _start(self) -> socket.socket:
        # bwrap's diagnostics go to a file, not a pipe: a pipe closed after start-up would
        # kill bwrap (and so the sandbox) with SIGPIPE on its first later message.
        with tempfile.TemporaryFile() as errors:
            ours, proc = self._spawn_server(errors.fileno())
            ours.settimeout(_START_TIMEOUT)
            try:
                ready = ours.recv(1)
            except OSError:
                ready = b""
            if ready != b"R":
                ours.close()
                with contextlib.suppress(ProcessLookupError):
                    proc.kill()
                proc.wait()
                errors.seek(0)
                said = " ".join(errors.read(4096).decode("utf-8", "replace").split())[:300]
                raise OSError(
                    errno.EPERM,
                    f"the sandbox could not be set up ({said or 'bwrap exited'}); nothing ran",
                )
        ours.settimeout(None)
        self._proc = proc
        return ours

    def _spawn_server(self, stderr: int) -> tuple[socket.socket, subprocess.Popen[bytes]]:
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        read_prog, write_prog = os.pipe()
        try:
            os.write(write_prog, self._program)  # a few hundred bytes: fits the pipe
            os.close(write_prog)
            write_prog = -1
            argv = [
                *self._bwrap_argv,
                "--seccomp",
                str(read_prog),
                "--",
                sys.executable,
                "-I",
                "-S",
                str(SERVER_SCRIPT),
                str(theirs.fileno()),
                str(self._ruleset_fd),
                *(str(mask) for mask in self._access),
            ]
            proc = subprocess.Popen(
                argv,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=stderr,
                pass_fds=(theirs.fileno(), self._ruleset_fd, read_prog),
                start_new_session=True,
                cwd="/",
            )
        except BaseException:
            ours.close()
            raise
        finally:
            os.close(read_prog)
            if write_prog >= 0:
                os.close(write_prog)
            theirs.close()
        return ours, proc

    def _launch(self) -> socket.socket:
        """Start the server from a thread that lives as long as it does, then read its
        answers there: bwrap's parent-death signal fires when the *thread* that forked it
        ends, so no short-lived caller thread may be its parent."""
        started: list[socket.socket | OSError] = []
        ready = threading.Event()
        self._generation += 1
        generation = self._generation

        def run() -> None:
            try:
                sock = self._start()
            except Exception as exc:  # handed to the caller, which must never wait forever
                failed = exc if isinstance(exc, OSError) else OSError(errno.EIO, str(exc))
                started.append(failed)
                ready.set()
                return
            started.append(sock)
            ready.set()
            self._read(sock, generation)

        threading.Thread(target=run, name="pct-sandbox", daemon=True).start()
        ready.wait()
        result = started[0]
        if isinstance(result, OSError):
            raise result
        return result

    def _read(self, sock: socket.socket, generation: int) -> None:
        while True:
            try:
                msg, fds, _flags, _addr = socket.recv_fds(sock, _MAX_MESSAGE, 4)
            except OSError:
                msg, fds = b"", []
            if not msg:
                break
            try:
                obj = json.loads(msg)
            except ValueError:
                obj = {}
            if isinstance(obj, dict) and "exit" in obj:
                child = self._children.pop(int(obj["exit"]), None)
                if child is not None:
                    child._exited(int(obj.get("code", -signal.SIGKILL)))
                continue
            reply = self._reply(sock, obj, fds)
            with self._wait_lock:
                waiter = self._waiters.popleft() if self._waiters else None
            if waiter is not None:
                waiter(reply)
        self._gone(sock, generation)

    def _reply(self, sock: socket.socket, obj: object, fds: list[int]) -> Reply:
        """A spawn's answer: its child, registered before the next message (its exit may be
        that message), or the server's error."""
        if not (isinstance(obj, dict) and isinstance(obj.get("pid"), int) and fds):
            for fd in fds:
                os.close(fd)
            return obj if isinstance(obj, dict) else {}
        for extra in fds[1:]:
            os.close(extra)
        inner = int(obj["pid"])
        reply: Reply
        try:
            reply = ConfinedPopen(pidfd_pid(fds[0]), fds[0])
            self._children[inner] = reply
        except OSError as exc:
            os.close(fds[0])
            reply = {"error": exc.errno or errno.EIO, "message": str(exc)}
        with contextlib.suppress(OSError):  # now the server may reap it
            sock.send(json.dumps({"ack": inner}).encode())
        return reply

    def _gone(self, sock: socket.socket, generation: int) -> None:
        """The server is gone, and with it its PID namespace: every child is dead."""
        gone: Reply = {"error": errno.EPIPE, "message": "the sandbox server is gone"}
        with self._wait_lock:
            if self._generation == generation:
                self._sock = None
            waiters = list(self._waiters)
            self._waiters.clear()
        for waiter in waiters:
            waiter(gone)
        for child in list(self._children.values()):
            child._exited(-signal.SIGKILL)
        self._children.clear()
        sock.close()
        if self._proc is not None:
            with contextlib.suppress(subprocess.TimeoutExpired):
                self._proc.wait(5)

    # -- pct's side ------------------------------------------------------------------------
    def popen(self, argv: Sequence[str], **kwargs: Any) -> ConfinedPopen:
        """Start `argv` in the sandbox with `Popen`-style `kwargs` (blocking, ~1 ms).

        Supported: stdin/stdout/stderr as descriptors or DEVNULL, pass_fds, cwd, env,
        start_new_session, and `preexec_fn` only as the lifeline's parent-death hook (the
        server then arms PR_SET_PDEATHSIG itself). Raises OSError when nothing ran.
        """
        done = threading.Event()
        got: list[Reply] = []

        def deliver(reply: Reply) -> None:
            got.append(reply)
            done.set()

        self._submit(argv, kwargs, deliver)
        done.wait()
        return _result(got[0])

    async def popen_async(self, argv: Sequence[str], **kwargs: Any) -> ConfinedPopen:
        """`popen` that waits for the server's answer without blocking the event loop, so
        other calls go on while the sandbox is busy."""
        loop = asyncio.get_running_loop()
        answer: asyncio.Future[Reply] = loop.create_future()

        def deliver(reply: Reply) -> None:
            with contextlib.suppress(RuntimeError):  # the loop already closed
                loop.call_soon_threadsafe(_settle, answer, reply)

        self._submit(argv, kwargs, deliver)
        return _result(await answer)

    def _submit(
        self, argv: Sequence[str], kwargs: dict[str, Any], deliver: Callable[[Reply], None]
    ) -> None:
        """Send one spawn request; `deliver` gets its answer (from the reader thread)."""
        sent: list[int] = []
        std: list[int] = []
        null: int | None = None
        try:
            for name in _STD_STREAMS:
                value = kwargs.get(name)
                if value == subprocess.PIPE:
                    raise ValueError(f"{name}=PIPE is not supported by the sandbox spawner")
                if value == subprocess.DEVNULL:
                    if null is None:
                        null = os.open(os.devnull, os.O_RDWR | os.O_CLOEXEC)
                    value = null
                if isinstance(value, int) and value >= 0:
                    std.append(len(sent))
                    sent.append(value)
                else:
                    std.append(-1)
            targets = [int(fd) for fd in kwargs.get("pass_fds", ())]
            sent += targets
            env = kwargs.get("env")
            cwd = kwargs.get("cwd")
            request = {
                "argv": [os.fsdecode(a) for a in argv],
                "std": std,
                "pass": targets,
                "cwd": os.fsdecode(cwd) if cwd is not None else None,
                "env": dict(env) if env is not None else None,
                "session": bool(kwargs.get("start_new_session")),
                "pdeathsig": kwargs.get("preexec_fn") is not None,
            }
            self._send(json.dumps(request).encode(), sent, deliver)
        finally:
            if null is not None:
                os.close(null)  # the message carries its own copy

    def _send(self, message: bytes, fds: list[int], deliver: Callable[[Reply], None]) -> None:
        with self._lock:  # one sender at a time: a waiter's place is its message's place
            if self._sock is None:
                try:
                    self._sock = self._launch()
                except OSError as exc:
                    self.failure = str(exc)
                    raise
            sock = self._sock
            with self._wait_lock:
                self._waiters.append(deliver)
            try:
                socket.send_fds(sock, [message], fds)
            except OSError as exc:
                with self._wait_lock, contextlib.suppress(ValueError):
                    self._waiters.remove(deliver)
                raise OSError(errno.EPIPE, f"the sandbox server is gone ({exc})") from None

    def close(self) -> None:
        """End the server (and so every process of this sandbox)."""
        with self._lock:
            sock, self._sock = self._sock, None
        if sock is not None:
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)
        if self._proc is not None:
            with contextlib.suppress(subprocess.TimeoutExpired):
                self._proc.wait(5)
