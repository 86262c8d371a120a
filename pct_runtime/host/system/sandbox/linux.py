"""Linux enforcement: bubblewrap namespaces, then a Landlock ruleset and a seccomp filter.

Everything costly happens once, in pct: the Landlock ruleset is created and filled here (its
fd stays open for the life of pct) and the seccomp program is compiled here. `spawner()`
starts one bwrap per ruleset (`bwrap.py` for the namespaces) that loads the seccomp program
and runs the in-namespace server (`nsserver.py`), which adds the sandbox's own devices to
the ruleset, restricts itself and spawns every job; every descendant of a job (a `setsid`
grandchild included) inherits all three. `apply_in_child` applies Landlock and seccomp alone
as a `preexec_fn` (the self-test's building block, no namespaces).

The seccomp filter always refuses ptrace-style access (`ptrace`, `process_vm_readv/writev`,
`pidfd_getfd`, `process_madvise`). With network off it also refuses every socket family but
AF_UNIX, Unix-socket connect/bind/listen/accept, addressed sends, AF_UNIX datagram sockets
and io_uring.

Landlockpy and seccompy (pinned) build the ruleset and the BPF program.
"""

from __future__ import annotations

import ctypes
import errno
import os
import platform
import subprocess
import tempfile
import threading
from pathlib import Path

from pct_runtime.host.system.sandbox.bwrap import layout, probed
from pct_runtime.host.system.sandbox.policy import (
    WRITABLE_DEVICES,
    SandboxSettings,
    masked_dirs,
    writable_roots,
)
from pct_runtime.host.system.sandbox.spawner import NamespaceSpawner

#: Landlock ABI needed for a sound write sandbox: 3 adds TRUNCATE (Linux 6.2), without which
#: `truncate(2)` could still empty any file the user owns.
MIN_LANDLOCK_ABI = 3
_PR_SET_NO_NEW_PRIVS = 38
_SYS_LANDLOCK_RESTRICT_SELF = 446
_SECCOMP_SET_MODE_FILTER = 1
_SYS_SECCOMP = {"x86_64": 317, "amd64": 317, "aarch64": 277, "arm64": 277}
_X32_SYSCALL_BIT = 0x40000000
#: x32 calls whose numbers differ from x86_64's (arch/x86/entry/syscalls/syscall_64.tbl).
_X32_OWN_NUMBERS = {
    "ptrace": 521,
    "sendmmsg": 538,
    "process_vm_readv": 539,
    "process_vm_writev": 540,
}
_AF_UNIX = 1
_SOCK_DGRAM = 2
_SOCK_TYPE_MASK = 0xF
#: Socket calls a network-off job may not make at all (Unix sockets can reach outside
#: services such as a Docker daemon, so connect/bind are refused for every family).
_DENIED_SOCKET_CALLS = ("connect", "bind", "listen", "accept", "accept4", "sendmmsg")
#: io_uring can open and connect sockets without the socket system calls.
_DENIED_IO_URING = ("io_uring_setup", "io_uring_enter", "io_uring_register")
#: Ways into another task's memory or descriptors that Landlock allows within one domain.
_DENIED_ALWAYS = (
    "ptrace",
    "process_vm_readv",
    "process_vm_writev",
    "pidfd_getfd",
    "process_madvise",
)


class _SockFprog(ctypes.Structure):
    """struct sock_fprog: the instruction count and a pointer to the BPF program."""

    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]


class _Libc:
    """libc entry points resolved once, in pct, so the child never loads anything."""

    def __init__(self) -> None:
        libc = ctypes.CDLL(None, use_errno=True)
        self.syscall = libc.syscall
        self.syscall.restype = ctypes.c_long
        self.prctl = libc.prctl
        self.prctl.restype = ctypes.c_int


_libc: _Libc | None = None


def _get_libc() -> _Libc:
    global _libc
    if _libc is None:
        _libc = _Libc()
    return _libc


def landlock_abi() -> int:
    """The kernel's Landlock ABI version; 0 when Landlock is missing or disabled."""
    try:
        import landlockpy
    except ImportError:
        return 0
    try:
        return int(landlockpy.abi_version())
    except OSError:
        return 0


def _seccomp_nr() -> int | None:
    return _SYS_SECCOMP.get(platform.machine().lower())


def unsupported_reason(settings: SandboxSettings) -> str | None:
    """Why this kernel cannot enforce `settings` (with what to do), or None if it can."""
    if not settings.confined:
        return None
    abi = landlock_abi()
    if abi < MIN_LANDLOCK_ABI:
        found = "not available" if abi == 0 else f"ABI {abi}"
        return (
            f"the kernel's Landlock LSM is {found}; --sandbox {settings.mode} needs Landlock "
            f"ABI {MIN_LANDLOCK_ABI} or newer (Linux 6.2+ with landlock in the lsm= boot "
            "list). Run on such a kernel, or pass --sandbox danger-full-access to run "
            "without a sandbox."
        )
    if _seccomp_nr() is None or not _seccomp_supported():
        return (
            "seccomp filters are not available on this kernel or architecture (x86_64 and "
            f"aarch64 are supported), and --sandbox {settings.mode} needs them. Run on such a "
            "kernel, or pass --sandbox danger-full-access to run without a sandbox."
        )
    _found, failure = probed(settings.network)
    if failure is not None:
        return (
            f"--sandbox {settings.mode} runs every job in bubblewrap namespaces, and {failure} "
            "Or pass --sandbox danger-full-access to run without a sandbox."
        )
    return None


def _seccomp_supported() -> bool:
    try:
        import seccompy
    except ImportError:
        return False
    return bool(seccompy.supported())


def _fail_in_child(what: str) -> None:
    err = ctypes.get_errno()
    os.write(2, f"pct sandbox: {what} failed ({os.strerror(err)}); nothing ran\n".encode())
    os._exit(126)


class LinuxConfinement:
    """A prepared Landlock ruleset plus seccomp program for one set of writable roots."""

    def __init__(
        self,
        settings: SandboxSettings,
        roots: tuple[Path, ...],
        readable: tuple[Path, ...] = (),
    ) -> None:
        import landlockpy
        from landlockpy import AccessFS, AccessNet, Scope

        abi = landlockpy.abi_version()
        file_write = AccessFS.WRITE_FILE | AccessFS.TRUNCATE
        tree_write = (
            file_write
            | AccessFS.REMOVE_DIR
            | AccessFS.REMOVE_FILE
            | AccessFS.MAKE_CHAR
            | AccessFS.MAKE_DIR
            | AccessFS.MAKE_REG
            | AccessFS.MAKE_SOCK
            | AccessFS.MAKE_FIFO
            | AccessFS.MAKE_BLOCK
            | AccessFS.MAKE_SYM
            | AccessFS.REFER
        )
        self.access = (
            int(file_write & landlockpy.fs_for_abi(abi)),
            int(tree_write & landlockpy.fs_for_abi(abi)),
        )
        handled_net = AccessNet.NONE
        scoped = Scope.NONE
        if not settings.network:
            handled_net = landlockpy.net_for_abi(abi)
            scoped = landlockpy.scope_for_abi(abi) & Scope.ABSTRACT_UNIX_SOCKET
        # Strict mode: every right asked for must be enforced, or construction fails.
        self._ruleset = landlockpy.Ruleset(
            handled_fs=tree_write & landlockpy.fs_for_abi(abi),
            handled_net=handled_net,
            scoped=scoped,
            best_effort=False,
        )
        for root in roots:
            self._ruleset.allow_path(str(root), tree_write)
        for device in WRITABLE_DEVICES:
            if os.path.exists(device):
                self._ruleset.allow_path(device, file_write)
        self.fd = self._ruleset.fileno()  # the kernel object a thread restricts itself to
        self.roots = roots
        self.settings = settings
        self.readable = readable
        self._filter_ref: object | None = None
        self._filter_keep: tuple[object, ...] = ()
        self.seccomp_program = b""
        self._prepare_seccomp(network=settings.network)
        self._lock = threading.Lock()
        self._spawner: NamespaceSpawner | None = None
        libc = _get_libc()
        self._prctl = libc.prctl
        self._syscall = libc.syscall
        self._seccomp = _seccomp_nr() or -1

    def _prepare_seccomp(self, *, network: bool) -> None:
        import seccompy
        from seccompy import ArgCmp, CmpOp

        flt = seccompy.Filter(seccompy.Action.ALLOW)
        machine = platform.machine().lower()

        def deny(name: str, *conds: ArgCmp) -> None:
            nr = seccompy.syscall_nr(name)
            variants = [nr]
            if machine in ("x86_64", "amd64"):
                # The x32 ABI: the same number with bit 30, or its own number for a few calls.
                variants.append(_X32_OWN_NUMBERS.get(name, nr) | _X32_SYSCALL_BIT)
            for number in variants:
                flt.errno(number, errno.EPERM, args=list(conds) or None)

        for name in _DENIED_ALWAYS:
            deny(name)
        if not network:
            deny("socket", ArgCmp(0, CmpOp.NE, _AF_UNIX))
            deny("socketpair", ArgCmp(0, CmpOp.NE, _AF_UNIX))
            deny("sendto", ArgCmp(4, CmpOp.NE, 0))  # send() passes no address: allowed
            # sendmsg's address is in memory seccomp cannot read; it only reaches a socket
            # from an AF_UNIX datagram socket (stream and seqpacket ones refuse or ignore
            # it), so no such socket may be made, alone or as a pair.
            dgram = ArgCmp(1, CmpOp.MASKED_EQ, _SOCK_DGRAM, _SOCK_TYPE_MASK)
            deny("socket", ArgCmp(0, CmpOp.EQ, _AF_UNIX), dgram)
            deny("socketpair", ArgCmp(0, CmpOp.EQ, _AF_UNIX), dgram)
            for name in (*_DENIED_SOCKET_CALLS, *_DENIED_IO_URING):
                deny(name)
        program = flt.program
        self.seccomp_program = bytes(program)
        buf = (ctypes.c_char * len(program)).from_buffer_copy(program)
        fprog = _SockFprog(len=len(program) // 8, filter=ctypes.addressof(buf))
        self._filter_keep = (buf, fprog)
        self._filter_ref = ctypes.byref(fprog)

    def _confine_calling_thread(self) -> str | None:
        """Confine the calling thread (and its future children); the failed step, or None."""
        if self._prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
            return "prctl(PR_SET_NO_NEW_PRIVS)"
        if self._syscall(_SYS_LANDLOCK_RESTRICT_SELF, self.fd, 0) != 0:
            return "landlock_restrict_self"
        if self._filter_ref is not None and (
            self._syscall(self._seccomp, _SECCOMP_SET_MODE_FILTER, 0, self._filter_ref) != 0
        ):
            return "seccomp(SECCOMP_SET_MODE_FILTER)"
        return None

    def apply_in_child(self) -> None:
        """A `preexec_fn`: confine the forked child, or exit 126 before anything runs."""
        failed = self._confine_calling_thread()
        if failed is not None:
            _fail_in_child(failed)

    def spawner(self) -> NamespaceSpawner:
        """The one server that spawns this ruleset's jobs in its namespaces (on first use).

        Raises OSError (nothing runs) when bubblewrap cannot work here.
        """
        with self._lock:
            if self._spawner is None:
                found, failure = probed(self.settings.network)
                if failure is not None or found is None:
                    raise OSError(errno.EPERM, f"the sandbox cannot be set up: {failure}")
                options = layout(
                    self.roots,
                    network=self.settings.network,
                    masks=masked_dirs(),
                    readable=self.readable,
                    root_user=os.geteuid() == 0,
                )
                self._spawner = NamespaceSpawner(
                    [found.path, *options], self.seccomp_program, self.fd, self.access
                )
            return self._spawner

    def close(self) -> None:
        """Stop the spawner and release the ruleset (only for throwaway rulesets)."""
        if self._spawner is not None:
            self._spawner.close()
        self._ruleset.close()


_cache: dict[tuple[SandboxSettings, tuple[Path, ...], tuple[Path, ...]], LinuxConfinement] = {}


def confinement_for(
    settings: SandboxSettings, cwd: Path, readable: tuple[Path, ...] = ()
) -> LinuxConfinement:
    """The prepared confinement for `settings` under `cwd` (one per distinct root set)."""
    roots = writable_roots(settings, cwd)
    key = (settings, roots, readable)
    found = _cache.get(key)
    if found is None:
        found = _cache[key] = LinuxConfinement(settings, roots, readable)
    return found


def self_test(settings: SandboxSettings) -> str | None:
    """Confine a real `/bin/sh` the way jobs are and check that a write is refused.

    Catches kernels (or container runtimes) that accept the calls but do not enforce them.
    Returns why the sandbox is not working, or None.
    """
    with tempfile.TemporaryDirectory(prefix="pct-sandbox-probe-") as probe:
        outside = Path(probe) / "outside"
        inside = Path(probe) / "inside"
        outside.mkdir()
        inside.mkdir()
        probe_settings = SandboxSettings("workspace-write", settings.network)
        confinement = LinuxConfinement(probe_settings, (inside.resolve(),))
        target = outside / "denied"
        script = f"true > '{target}'; true > '{inside / 'allowed'}'"
        try:
            proc = confinement.spawner().popen(
                ["/bin/sh", "-c", script],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
            proc.wait(10)
        except (OSError, subprocess.SubprocessError) as exc:
            return f"the sandbox self-test could not confine /bin/sh ({exc})"
        finally:
            confinement.close()
        if target.exists():
            return (
                "the host accepted the sandbox but did not enforce it (a confined write "
                "outside the workspace succeeded past the read-only mount and Landlock). Run "
                "pct on a host where both are enforced, or pass --sandbox danger-full-access."
            )
        if not (inside / "allowed").exists():
            return (
                "the sandbox self-test could not write inside its own workspace; the "
                "Landlock rules are not usable here. Pass --sandbox danger-full-access."
            )
    return None
