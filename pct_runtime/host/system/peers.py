"""Is the process at the other end of a local TCP connection inside a sandbox?

A sandboxed job can read the pct token (reads are allowed everywhere) and, with
`--sandbox-network`, connect to any runtime's control or MCP port: it could answer its own
approvals or run commands outside its sandbox. Those ports refuse such peers.

The fact checked is kernel-visible and one-way: every pct sandbox installs a seccomp
filter, and a process can never remove one, so a peer holding more seccomp filters
(`Seccomp_filters` in /proc/<pid>/status) than this runtime was confined after it — by any
pct runtime, or by another sandbox (Codex's), which is refused just the same. An
environment variable would not do: a job can unset it.

The peer's socket is found with one sock_diag query for the exact connection (its local
address is our peer address, its remote one our local address; /proc/net/tcp{,6}, which
can be thousands of lines, only where sock_diag is missing). Its holder is then searched
among this user's processes, fewest descriptors first, stopping at the first one (see
`_holders`: the cost is bounded by the holder's descriptors, not by those of every other
process), each through an fd on its /proc directory, so a pid reused mid-check is never
read as the old process. A socket that no process holds
(passed in flight over a Unix socket while the check runs) is refused too. A peer that is
not a socket of this machine is left to the token. Linux only; elsewhere nothing is
refused.
"""

from __future__ import annotations

import errno
import functools
import ipaddress
import os
import socket
import struct
import sys
from collections.abc import Iterator

REFUSED = "refused: connections from a pct sandbox are not accepted"
REFUSED_DETAIL = (
    f"{REFUSED}. This process runs inside a sandbox (a shell job or Code Mode cell), and a "
    "sandboxed command may not control pct or run tools outside its sandbox. Run it from an "
    "unsandboxed terminal instead."
)

#: How `listener_owned_by` begins when no socket listens there at all.
NOTHING_LISTENS = "nothing listens on"

_PROC = "/proc"
_NETLINK_SOCK_DIAG = 4
_SOCK_DIAG_BY_FAMILY = 20
_NLM_F_REQUEST = 1
_NLMSG_ERROR = 2
_NO_COOKIE = 0xFFFFFFFF
_TCP_LISTEN = 10
_diag_works = hasattr(socket, "AF_NETLINK")
_own_filters: int | None = None
# The process that held the last checked connection: a client reconnects from the same
# process (the MCP SDK opens a connection per request), so it is read first and the scan
# of every process is skipped. Which holder is found first does not change the answer
# (see `_holders`).
_last_holder: int | None = None
#: The descriptor name the last holder held it under (read first in that process).
_last_fd: str | None = None
#: A last holder with more descriptors than this is not read first (its scan would cost more).
HINT_MAX_FDS = 256
#: A last holder with more descendants than this is judged in a thread, not on the loop.
QUICK_MAX_DESCENDANTS = 32


def _status_fields(text: str) -> dict[str, str]:
    fields: dict[str, str] = {}
    for line in text.splitlines():
        key, sep, value = line.partition(":")
        if sep:
            fields[key] = value.strip()
    return fields


def seccomp_filters(status_text: str) -> int:
    """How many seccomp filters a /proc/<pid>/status text reports (0 when none or unknown)."""
    status_text = "\n" + status_text  # the key may open the text
    at = status_text.find("\nSeccomp_filters:")
    if at < 0:
        return 0
    end = status_text.find("\n", at + 1)
    try:
        return int(status_text[at + len("\nSeccomp_filters:") : end if end >= 0 else None])
    except ValueError:
        return 0


def own_seccomp_filters() -> int:
    """This runtime's own filter count (read once: it only ever grows, never in pct)."""
    global _own_filters
    if _own_filters is None:
        with open(f"{_PROC}/self/status", encoding="utf-8") as handle:
            _own_filters = seccomp_filters(handle.read())
    return _own_filters


def _ip(host: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address:
    """`host` without a scope id, an IPv4-mapped IPv6 address as the IPv4 one."""
    addr = ipaddress.ip_address(host.split("%", 1)[0])
    if isinstance(addr, ipaddress.IPv6Address) and addr.ipv4_mapped is not None:
        return addr.ipv4_mapped
    return addr


def _proc_address(host: str, port: int) -> tuple[str, str]:
    """The /proc/net table and its `HEXADDR:PORT` spelling of (host, port)."""
    packed = _ip(host).packed
    words = struct.unpack(f"={len(packed) // 4}I", packed)  # the kernel prints host order
    table = "tcp" if len(packed) == 4 else "tcp6"
    return table, "".join(f"{w:08X}" for w in words) + f":{port:04X}"


def _find_in_table(peer: tuple[str, int], local: tuple[str, int]) -> tuple[int, int] | None:
    """`_find_socket` by /proc/net/tcp{,6}: kernels without sock_diag (reads a long table)."""
    peer_table, peer_key = _proc_address(*peer)
    local_table, local_key = _proc_address(*local)
    if peer_table != local_table:
        return None
    try:
        with open(f"{_PROC}/net/{peer_table}", encoding="ascii") as handle:
            table = handle.read()  # one search of the whole table: it can be long
    except OSError:
        return None
    at = table.find(f" {peer_key} {local_key} ")
    if at < 0:
        return None
    cols = table[at : table.find("\n", at)].split()
    if len(cols) < 9:
        return None
    return int(cols[6]), int(cols[8])


def _packed(host: str) -> tuple[int, bytes]:
    addr = _ip(host)
    family = socket.AF_INET if addr.version == 4 else socket.AF_INET6
    return family, addr.packed


def _find_by_diag(
    peer: tuple[str, int], local: tuple[str, int], states: int = 0xFFFFFFFF
) -> tuple[int, int] | None:
    """One sock_diag lookup of the exact connection: (uid, inode), or None if none.

    Raises OSError when the kernel offers no sock_diag (the caller reads the table).
    """
    family, src = _packed(peer[0])
    local_family, dst = _packed(local[0])
    if family != local_family:
        return None
    req = struct.pack("=BBBBI", family, socket.IPPROTO_TCP, 0, 0, states)
    req += struct.pack(">HH", peer[1], local[1]) + src.ljust(16, b"\0") + dst.ljust(16, b"\0")
    req += struct.pack("=III", 0, _NO_COOKIE, _NO_COOKIE)
    header = struct.pack("=IHHII", 16 + len(req), _SOCK_DIAG_BY_FAMILY, _NLM_F_REQUEST, 1, 0)
    with socket.socket(socket.AF_NETLINK, socket.SOCK_DGRAM, _NETLINK_SOCK_DIAG) as nl:
        nl.settimeout(2.0)
        nl.sendto(header + req, (0, 0))
        reply = nl.recv(65536)
    _length, kind = struct.unpack_from("=IH", reply)
    if kind == _NLMSG_ERROR:
        (code,) = struct.unpack_from("=i", reply, 16)
        if code == -errno.ENOENT:
            return None
        raise OSError(-code, os.strerror(-code))
    # nlmsghdr (16), then inet_diag_msg: 4 bytes, the id (48), expires, rqueue, wqueue.
    uid, inode = struct.unpack_from("=II", reply, 16 + 4 + 48 + 12)
    return uid, inode


def _find_socket(peer: tuple[str, int], local: tuple[str, int]) -> tuple[int, int] | None:
    """(uid, inode) of the socket whose local end is `peer` and remote end `local`."""
    if _diag_works:
        try:
            return _find_by_diag(peer, local)
        except OSError:
            pass
    return _find_in_table(peer, local)


def _read_status(pdir: int) -> str:
    sfd = os.open("status", os.O_RDONLY, dir_fd=pdir)
    try:
        return os.read(sfd, 16384).decode("utf-8", "replace")
    finally:
        os.close(sfd)


def _status_of(pid: int) -> dict[str, str]:
    try:
        pdir = os.open(f"{_PROC}/{pid}", os.O_RDONLY | os.O_DIRECTORY)
    except OSError:
        return {}
    try:
        return _status_fields(_read_status(pdir))
    except OSError:
        return {}
    finally:
        os.close(pdir)


@functools.cache
def _fd_dir_counts() -> bool:
    """Whether this kernel gives an fd directory the count of its entries as its size."""
    try:
        return os.stat(f"{_PROC}/self/fd").st_size > 0  # this process has fds open
    except OSError:
        return False


def _fd_cost(pid: int) -> int:
    """How many descriptors `pid` has open (the size of its fd directory, Linux 6.2+),
    else the size of its descriptor table (at least as many): a bound on the cost of
    reading its fd directory."""
    try:
        size = os.stat(f"{_PROC}/{pid}/fd").st_size
    except OSError:
        return 0
    if size or _fd_dir_counts():
        return size
    try:
        return int(_status_of(pid).get("FDSize", "0") or 0)
    except ValueError:
        return 0


def _processes(uid: int) -> list[int]:
    """Every process of `uid`, fewest descriptors first (two stat calls each)."""
    found: list[tuple[int, int]] = []
    for name in os.listdir(_PROC):
        if not name.isdigit():
            continue
        try:
            if os.stat(f"{_PROC}/{name}").st_uid != uid:
                continue
        except OSError:
            continue
        pid = int(name)
        found.append((_fd_cost(pid), pid))
    found.sort()
    return [pid for _, pid in found]


def _filters_if_holding(pid: int, target: str, guess: str | None = None) -> int | None:
    found = _holding(pid, target, guess)
    return None if found is None else found[0]


def _holding(pid: int, target: str, guess: str | None = None) -> tuple[int, str] | None:
    """(seccomp filter count, descriptor name) of process `pid` if it holds `target` now.

    `guess` names the descriptor to look at first (where the last socket was found: a new
    socket takes the lowest free number, often the one the last connection freed). The fd
    scan and the status read go through one fd on its /proc directory, so a pid reused in
    between is never read as the old process (nor one of another user)."""
    try:
        pdir = os.open(f"{_PROC}/{pid}", os.O_RDONLY | os.O_DIRECTORY)
    except OSError:
        return None
    try:
        if os.fstat(pdir).st_uid != os.getuid():
            return None
        fdir = os.open("fd", os.O_RDONLY | os.O_DIRECTORY, dir_fd=pdir)
        try:
            found = _holds(fdir, target, guess)
        finally:
            os.close(fdir)
        if found is None:
            return None
        status = _read_status(pdir)
        if not status:
            return None  # exited between the two reads: it holds nothing now
        return seccomp_filters(status), found
    except OSError:
        return None
    finally:
        os.close(pdir)


def _holds(fdir: int, target: str, guess: str | None) -> str | None:
    """The name of a descriptor in the fd directory `fdir` that is `target`, or None."""
    if guess is not None:
        try:
            if os.readlink(guess, dir_fd=fdir) == target:
                return guess
        except OSError:
            pass
    for fd_name in os.listdir(fdir):
        try:
            if os.readlink(fd_name, dir_fd=fdir) == target:
                return fd_name
        except OSError:
            continue  # closed meanwhile
    return None


def _children(pid: int) -> list[int] | None:
    """`pid`'s children from /proc/<pid>/task/*/children (None where the kernel has none)."""
    out: list[int] = []
    try:
        tasks = os.listdir(f"{_PROC}/{pid}/task")
    except OSError:
        return []  # gone
    for tid in tasks:
        try:
            with open(f"{_PROC}/{pid}/task/{tid}/children", encoding="ascii") as handle:
                out += [int(c) for c in handle.read().split()]
        except FileNotFoundError:
            return None
        except (OSError, ValueError):
            continue
    return out


def _descendants(root: int, uid: int) -> list[int]:
    """Every process below `root` (its children's children too)."""
    found = _descendants_within(root, None)
    if found is None:  # no children files: find them by PPid (reads every status)
        return _descendants_by_ppid(root, uid)
    return found


def _descendants_within(root: int, limit: int | None) -> list[int] | None:
    """`root`'s descendants by the children files; None without them, or past `limit`."""
    out: list[int] = []
    stack = [root]
    while stack:
        children = _children(stack.pop())
        if children is None:
            return None
        out += children
        if limit is not None and len(out) > limit:
            return None
        stack += children
    return out


def _descendants_by_ppid(root: int, uid: int) -> list[int]:
    children: dict[int, list[int]] = {}
    for pid in _processes(uid):
        ppid = _status_of(pid).get("PPid", "")
        if ppid.isdigit():
            children.setdefault(int(ppid), []).append(pid)
    out: list[int] = []
    stack = [root]
    while stack:
        below = children.get(stack.pop(), [])
        out += below
        stack += below
    return out


def _holders(inode: int, uid: int) -> tuple[bool, bool]:
    """(some holder that matters is sandboxed, some process holds it), over processes of
    `uid`.

    Bounded by the holder's own descriptors, not everyone's: processes are read fewest
    descriptors first and the search stops at the first holder, so a job with 200,000
    open files is read only when it is the peer (or when every smaller process was read).
    A sandboxed first holder refuses. An unsandboxed one accepts unless one of its own
    sandboxed descendants holds the socket too (inherited into a sandbox after it was
    connected). A sandboxed holder elsewhere either gave the socket to the unsandboxed one
    or got it from it, over a Unix socket: both need that process's help, and a process
    outside every sandbox could as well connect itself."""
    global _last_holder, _last_fd
    target = f"socket:[{inode}]"
    hint = _hint()
    first = [hint] if hint is not None else []
    for pid in _candidates(first, uid):
        held = _holding(pid, target, _last_fd if pid == hint else None)
        if held is None:
            continue
        filters, _last_fd = held
        _last_holder = pid
        if filters > own_seccomp_filters():
            return True, True
        return _shared_below(target, _descendants(pid, uid)), True
    return False, False


def _hint() -> int | None:
    """The last connection's holder, when it is cheap enough to read before anyone else."""
    hint = _last_holder
    return hint if hint is not None and _fd_cost(hint) <= HINT_MAX_FDS else None


def _shared_below(target: str, below: list[int]) -> bool:
    """Whether a sandboxed process among `below` (an unsandboxed holder's descendants) holds
    `target` too."""
    own = own_seccomp_filters()
    return any(
        _filters_of(child) > own and (_filters_if_holding(child, target) or 0) > own
        for child in below
    )


def _candidates(first: list[int], uid: int) -> Iterator[int]:
    """`first`, then every process of `uid` (fewest descriptors first), each once: the scan
    of /proc is made only when `first` does not hold the socket."""
    yield from first
    yield from (pid for pid in _processes(uid) if pid not in first)


def _filters_of(pid: int) -> int:
    try:
        pdir = os.open(f"{_PROC}/{pid}", os.O_RDONLY | os.O_DIRECTORY)
    except OSError:
        return 0
    try:
        return seccomp_filters(_read_status(pdir))
    except OSError:
        return 0
    finally:
        os.close(pdir)


def _listener(host: str, port: int) -> tuple[int, int] | None:
    """(uid, inode) of the TCP socket listening on (host, port), or None."""
    any_host = "::" if _ip(host).version == 6 else "0.0.0.0"
    if _diag_works:
        try:
            return _find_by_diag((host, port), (any_host, 0), 1 << _TCP_LISTEN)
        except OSError:
            pass
    return _find_in_table((host, port), (any_host, 0))


def listener_inode(host: str, port: int) -> int | None:
    """The inode of this user's TCP listener on (host, port) (None: none, or not Linux)."""
    if not sys.platform.startswith("linux"):
        return None
    found = _listener(host, port)
    return found[1] if found is not None and found[0] == os.getuid() else None


def listener_owned_by(host: str, port: int, pid: int) -> str | None:
    """Why the TCP listener on (host, port) is not process `pid`'s, or None when it is: a
    registry entry is trusted with the token only when the pid it names holds the
    listening socket (one sock_diag lookup, then that one process's descriptors)."""
    if not sys.platform.startswith("linux"):
        return None  # no /proc to ask: loopback is all that is checked there
    found = _listener(host, port)
    if found is None:
        return f"{NOTHING_LISTENS} {host}:{port}"
    uid, inode = found
    if uid != os.getuid():
        return f"{host}:{port} belongs to another user (uid {uid})"
    if _filters_if_holding(pid, f"socket:[{inode}]") is None:
        return f"{host}:{port} is not held by pid {pid}"
    return None


def sandboxed_peer(peer: object, local: object) -> bool:
    """True when the peer of a TCP connection (asyncio's `peername`, `sockname`) is a local
    process inside a sandbox, or a socket no process holds."""
    if not sys.platform.startswith("linux"):
        return False
    if not isinstance(peer, tuple) or not isinstance(local, tuple):
        return False  # a Unix socket: not served here
    return sandboxed_address((str(peer[0]), int(peer[1])), (str(local[0]), int(local[1])))


def quick_sandboxed_peer(peer: object, local: object) -> bool | None:
    """`sandboxed_peer`'s answer when it costs well under a millisecond, else None.

    It is quick when the socket is found by sock_diag and the last connection's holder
    (`HINT_MAX_FDS` descriptors or fewer, `QUICK_MAX_DESCENDANTS` descendants or fewer)
    holds it: a client reconnecting. The event loop asks this first and hands only the rest
    (a scan of every process) to a thread."""
    if not sys.platform.startswith("linux"):
        return False
    if not isinstance(peer, tuple) or not isinstance(local, tuple):
        return False
    hint = _hint()
    if hint is None or not _diag_works:
        return None
    try:
        found = _find_by_diag((str(peer[0]), int(peer[1])), (str(local[0]), int(local[1])))
    except (OSError, ValueError):
        return None
    if found is None or found[0] != os.getuid() or found[1] == 0:
        return None  # the full check tells these apart
    target = f"socket:[{found[1]}]"
    filters = _filters_if_holding(hint, target, _last_fd)
    if filters is None:
        return None
    if filters > own_seccomp_filters():
        return True
    below = _descendants_within(hint, QUICK_MAX_DESCENDANTS)
    return None if below is None else _shared_below(target, below)


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
