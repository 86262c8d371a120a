"""A confined spawner thread with a private file-descriptor table (Linux).

Landlock, seccomp and no_new_privs apply to the calling *thread* and pass to the children it
creates. So one thread per ruleset confines itself once and then spawns every job with the
ordinary vfork-based `subprocess.Popen` — far cheaper than a full `fork` with a `preexec_fn`.

A confined child shares its Landlock domain with that thread, and the kernel lets a process
inspect tasks of its own domain: through `/proc/<pct>/task/<thread>/fd/N` a job could open
pct's pipes (its MCP stdio, say) for writing. So before confining itself the thread unshares
its fd table (`unshare(CLONE_FILES)`) and closes every copied descriptor; the only thing it
keeps is its end of a Unix socketpair. Each spawn sends the child's own descriptors over that
socket (`SCM_RIGHTS`), the thread spawns with them and closes them, and answers with one byte.
ptrace-style access to the thread (and so to pct's memory) is refused by the seccomp filter.
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import fcntl
import os
import queue
import socket
import subprocess
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from pct_runtime.jsontypes import JSONObject

_CLONE_FILES = 0x400
_STD_STREAMS = ("stdin", "stdout", "stderr")


@dataclass
class _Request:
    argv: list[str]
    kwargs: JSONObject
    slots: list[tuple[str, int | None]]  # (kwarg, index in pass_fds or None), per sent fd
    result: subprocess.Popen[bytes] | None = None
    error: BaseException | None = None
    done: threading.Event = field(default_factory=threading.Event)


class SpawnerThread:
    """Spawns processes from one confined thread; `confine()` names a failed step or None."""

    def __init__(self, confine: Callable[[], str | None], name: str = "pct-sandbox") -> None:
        self._confine = confine
        self._main, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        self._theirs_fd = theirs.detach()  # a bare number: the thread re-wraps its own copy
        self._requests: queue.SimpleQueue[_Request] = queue.SimpleQueue()
        self._lock = threading.Lock()
        self._failure: str | None = None
        self._ready = threading.Event()
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)
        self._thread.start()
        self._ready.wait()
        os.close(self._theirs_fd)  # pct's copy; the thread keeps its own in its private table

    @property
    def failure(self) -> str | None:
        """Why the thread could not isolate or confine itself (it then spawns nothing)."""
        return self._failure

    # -- the thread ------------------------------------------------------------------------
    def _isolate(self) -> str | None:
        libc = ctypes.CDLL(None, use_errno=True)
        if libc.unshare(_CLONE_FILES) != 0:
            return f"unshare(CLONE_FILES) failed: {os.strerror(ctypes.get_errno())}"
        failed = self._confine()  # needs the ruleset fd, so before the copies are closed
        if failed is not None:
            return f"{failed} failed: {os.strerror(ctypes.get_errno())}"
        keep = self._theirs_fd
        null = os.open(os.devnull, os.O_RDWR)
        for fd in (0, 1, 2):
            if fd != null:
                os.dup2(null, fd)
        for low, high in ((3, keep), (keep + 1, 1 << 20)):
            if low < high:
                os.closerange(low, high)
        return None

    def _run(self) -> None:
        try:
            self._failure = self._isolate()
        except OSError as exc:
            self._failure = str(exc)
        self._ready.set()
        if self._failure is not None:
            return  # pct's table still holds the other end; spawns see `failure` and refuse
        sock = socket.socket(fileno=self._theirs_fd)  # in the thread's private table
        while True:
            try:
                msg, received, _flags, _addr = socket.recv_fds(sock, 1, 16)
            except OSError:
                return
            fds = list(received)
            if not msg:
                return
            request = self._requests.get()
            try:
                sock = self._spawn(request, fds, sock)
            except BaseException as exc:  # reported to the caller, never raised here
                request.error = exc
            finally:
                for fd in fds:
                    with contextlib.suppress(OSError):
                        os.close(fd)
                request.done.set()
            try:
                sock.sendall(b"d")
            except OSError:
                return

    def _spawn(self, request: _Request, fds: list[int], sock: socket.socket) -> socket.socket:
        """Place the received descriptors and spawn; returns the (maybe moved) socket.

        `pass_fds` keep their numbers (a child may be told its descriptor number in argv),
        so received copies are first lifted above every wanted number, then put in place.
        """
        kwargs = dict(request.kwargs)
        passed = list(kwargs.get("pass_fds", ()))
        wanted = set(passed)
        if sock.fileno() in wanted:
            moved = socket.socket(fileno=os.dup(sock.fileno()))
            sock.close()
            sock = moved
        base = max([*wanted, sock.fileno(), 2]) + 1
        lifted = []
        for fd in fds:
            lifted.append(fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, base))
            os.close(fd)
        fds[:] = lifted  # the caller closes these
        for (name, index), fd in zip(request.slots, lifted, strict=True):
            if index is None:
                kwargs[name] = fd
            else:
                os.dup2(fd, passed[index], inheritable=False)
                fds.append(passed[index])
        request.result = subprocess.Popen(request.argv, **kwargs)
        return sock

    # -- pct's side ----------------------------------------------------------------------
    def popen(self, argv: Sequence[str], **kwargs: Any) -> subprocess.Popen[bytes]:
        """`subprocess.Popen(argv, **kwargs)` run by the confined thread (blocking).

        Standard streams must be file descriptors or `subprocess.DEVNULL` (a PIPE would be
        created in the thread's private table). Raises OSError(EPERM) when the thread is
        not confined, so nothing ever runs unconfined.
        """
        if self._failure is not None:
            raise OSError(
                errno.EPERM, f"the sandbox could not be applied ({self._failure}); nothing ran"
            )
        sent: list[int] = []
        slots: list[tuple[str, int | None]] = []
        for name in _STD_STREAMS:
            value = kwargs.get(name)
            if value == subprocess.PIPE:
                raise ValueError(f"{name}=PIPE is not supported by the sandbox spawner")
            if isinstance(value, int) and value >= 0:
                sent.append(value)
                slots.append((name, None))
        for index, fd in enumerate(kwargs.get("pass_fds", ())):
            sent.append(fd)
            slots.append(("pass_fds", index))
        request = _Request(list(argv), kwargs, slots)
        with self._lock:
            self._requests.put(request)
            socket.send_fds(self._main, [b"s"], sent)
            if self._main.recv(1) != b"d":
                raise OSError(errno.EPIPE, "the sandbox spawner thread is gone")
        request.done.wait()
        if request.error is not None:
            raise request.error
        assert request.result is not None
        return request.result

    def close(self) -> None:
        """End the thread (it exits when pct's end of the socket closes)."""
        self._main.close()
        self._thread.join(5)
