"""Is the process at the other end of a local TCP connection inside a sandbox?

A sandboxed job can read the pct token (reads are allowed everywhere) and, with
`--sandbox-network`, connect to any runtime's control or MCP port: it could answer its own
approvals or run commands outside its sandbox. Those ports refuse such peers.

The fact checked is kernel-visible and one-way: every pct sandbox installs a seccomp
filter, and a process can never remove one, so a peer holding more seccomp filters
(`Seccomp_filters` in /proc/<pid>/status) than this runtime was confined after it — by any
pct runtime, or by another sandbox (Codex's), which is refused just the same. An
environment variable would not do: a job can unset it.

The peer's socket is found in /proc/net/tcp{,6} (its local address is our peer address,
its remote one our local address), then every process of this user that holds that socket
inode is checked through an fd on its /proc directory, so a pid reused mid-check is never
read as the old process. A socket that no process holds (passed in flight over a Unix
socket while the check runs) is refused too. A peer not in the tables is not on this
machine: the token alone governs it. Linux only; elsewhere nothing is refused.
"""

from __future__ import annotations

import contextlib
import ipaddress
import os
import struct
import sys

REFUSED = "refused: connections from a pct sandbox are not accepted"
REFUSED_DETAIL = (
    f"{REFUSED}. This process runs inside a sandbox (a shell job or Code Mode cell), and a "
    "sandboxed command may not control pct or run tools outside its sandbox. Run it from an "
    "unsandboxed terminal instead."
)

_PROC = "/proc"
_own_filters: int | None = None


def _status_fields(text: str) -> dict[str, str]:
    fields: dict[str, str] = {}
    for line in text.splitlines():
        key, sep, value = line.partition(":")
        if sep:
            fields[key] = value.strip()
    return fields


def seccomp_filters(status_text: str) -> int:
    """How many seccomp filters a /proc/<pid>/status text reports (0 when none or unknown)."""
    fields = _status_fields(status_text)
    try:
        return int(fields.get("Seccomp_filters", "0"))
    except ValueError:
        return 0


def own_seccomp_filters() -> int:
    """This runtime's own filter count (read once: it only ever grows, never in pct)."""
    global _own_filters
    if _own_filters is None:
        with open(f"{_PROC}/self/status", encoding="utf-8") as handle:
            _own_filters = seccomp_filters(handle.read())
    return _own_filters


def _proc_address(host: str, port: int) -> tuple[str, str]:
    """The /proc/net table and its `HEXADDR:PORT` spelling of (host, port)."""
    addr = ipaddress.ip_address(host.split("%", 1)[0])
    if isinstance(addr, ipaddress.IPv6Address) and addr.ipv4_mapped is not None:
        addr = addr.ipv4_mapped
    packed = addr.packed
    words = struct.unpack(f"={len(packed) // 4}I", packed)  # the kernel prints host order
    table = "tcp" if len(packed) == 4 else "tcp6"
    return table, "".join(f"{w:08X}" for w in words) + f":{port:04X}"


def _find_socket(peer: tuple[str, int], local: tuple[str, int]) -> tuple[int, int] | None:
    """(uid, inode) of the socket whose local end is `peer` and remote end `local`."""
    peer_table, peer_key = _proc_address(*peer)
    local_table, local_key = _proc_address(*local)
    if peer_table != local_table:
        return None
    try:
        with open(f"{_PROC}/net/{peer_table}", encoding="ascii") as handle:
            next(handle, None)
            for line in handle:
                cols = line.split()
                if len(cols) > 9 and cols[1] == peer_key and cols[2] == local_key:
                    return int(cols[7]), int(cols[9])
    except OSError:
        return None
    return None


def _holders(inode: int, uid: int) -> tuple[bool, bool]:
    """(some holder is sandboxed, some process holds it) over processes of `uid`."""
    target = f"socket:[{inode}]"
    own = own_seccomp_filters()
    held = False
    for name in os.listdir(_PROC):
        if not name.isdigit():
            continue
        try:
            pdir = os.open(f"{_PROC}/{name}", os.O_RDONLY | os.O_DIRECTORY)
        except OSError:
            continue
        try:
            if os.fstat(pdir).st_uid != uid:
                continue
            fdir = os.open("fd", os.O_RDONLY | os.O_DIRECTORY, dir_fd=pdir)
            try:
                found = False
                for fd_name in os.listdir(fdir):
                    with contextlib.suppress(OSError):
                        if os.readlink(fd_name, dir_fd=fdir) == target:
                            found = True
                            break
            finally:
                os.close(fdir)
            if not found:
                continue
            sfd = os.open("status", os.O_RDONLY, dir_fd=pdir)
            try:
                status = os.read(sfd, 16384).decode("utf-8", "replace")
            finally:
                os.close(sfd)
            if not status:
                continue  # exited between the two reads: it holds nothing now
            held = True
            if seccomp_filters(status) > own:
                return True, True
        except OSError:
            continue
        finally:
            os.close(pdir)
    return False, held


def sandboxed_peer(peer: object, local: object) -> bool:
    """True when the peer of a TCP connection (asyncio's `peername`, `sockname`) is a local
    process inside a sandbox, or a socket no process holds."""
    if not sys.platform.startswith("linux"):
        return False
    if not isinstance(peer, tuple) or not isinstance(local, tuple):
        return False  # a Unix socket: not served here
    return sandboxed_address((str(peer[0]), int(peer[1])), (str(local[0]), int(local[1])))


def sandboxed_address(peer: tuple[str, int], local: tuple[str, int]) -> bool:
    """`sandboxed_peer` by addresses: the connection from `peer` to our `local`."""
    try:
        found = _find_socket(peer, local)
    except ValueError:
        return False
    if found is None:
        return False  # not a socket of this machine's network namespace
    uid, inode = found
    if uid != os.getuid():
        return False  # another user's process: it cannot read our token
    if inode == 0:
        return True  # a socket already orphaned: nobody legitimate is behind it
    sandboxed, held = _holders(inode, uid)
    return sandboxed or not held
