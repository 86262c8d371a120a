"""Content-addressed file images beside the journal: `<agent dir>/pct/journal-blobs/`.

A blob is named by the SHA-256 of its bytes (two levels: `ab/abcdef…`), written to a
private temporary name, fsync'd and renamed, mode 0600, so a crash leaves either the whole
blob or none. An existing blob is reused (its mtime refreshed, which keeps a concurrent
prune away from it until the call that needs it is recorded).
"""

from __future__ import annotations

import contextlib
import os
import stat
import time
from collections.abc import Iterator

from pct_runtime.host.system.folders import path_text

TYPE_CHECKING = False  # see pct_runtime.tuples
if TYPE_CHECKING:
    from pathlib import Path

BLOB_DIR_NAME = "journal-blobs"
#: Images taken at commit time, not yet named by their hash (the writer thread names them).
PENDING_DIR_NAME = "pending"
#: An unreferenced blob younger than this is kept: its call may not be recorded yet.
PRUNE_GRACE_SECONDS = 120.0
#: A pending image older than this that no row names belongs to a writer that died.
PENDING_GRACE_SECONDS = 3600.0
#: A row's image not hashed yet (`pct apply-patch` leaves that to the next opener):
#: `pending:<name in pending/>:<size>:<mtime_ns>`, the identity the file had when taken.
PENDING_PREFIX = "pending:"
#: An image whose pending file changed or vanished before it was hashed: never matches.
LOST = "lost"
OPEN_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
#: How many pending images `link_pending` looks through for a file's other name (a few per
#: spooled row normally: the spool is drained every 50 rows).
_PENDING_SCAN_LIMIT = 1000
OPEN_CLOEXEC = getattr(os, "O_CLOEXEC", 0)


def sha256_hex(data: bytes) -> str:
    import hashlib  # on first use: `pct apply-patch` hashes nothing (OpenSSL loads in ms)

    return hashlib.sha256(data).hexdigest()


def _private_dirs(root: str, shard: str | os.PathLike[str]) -> None:
    """The blob folder and its shard, each 0700 (`parents=True` would use the umask), and
    each a real directory: a symbolic link planted in their place is refused (OSError), so
    no image is ever written into a folder the link points at."""
    # `Path(root).parent.mkdir(mode=0o700, parents=True, exist_ok=True)`, without pathlib.
    os.makedirs(os.path.dirname(root) or ".", mode=0o700, exist_ok=True)
    for folder in (root, shard):
        with contextlib.suppress(FileExistsError):
            os.mkdir(folder, 0o700)
        if not stat.S_ISDIR(os.lstat(folder).st_mode):
            raise NotADirectoryError(f"{folder} is not a directory (a link planted there?)")


def write_all(fd: int, data: bytes) -> None:
    """Write all of `data` to `fd` (`os.write` may write less than it is given)."""
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


class BlobStore:
    """Put, read and remove blobs under one directory."""

    def __init__(self, root: str | os.PathLike[str]) -> None:
        # Strings inside: `pct apply-patch` (links into `pending/` only) loads no pathlib.
        self._root = path_text(root)
        self._pending = os.path.join(self._root, PENDING_DIR_NAME)

    def path_of(self, digest: str) -> Path:
        from pathlib import Path

        return Path(self._root, digest[:2], digest)

    def put(self, data: bytes, digest: str | None = None, *, durable: bool = True) -> str:
        """Store `data` (fsync'd before return when `durable`); return its SHA-256.

        Raises OSError (full disk, permissions)."""
        digest = digest or sha256_hex(data)
        target = self.path_of(digest)
        try:
            os.utime(target)
            return digest  # already stored: same bytes by construction
        except FileNotFoundError:
            pass
        _private_dirs(self._root, target.parent)
        staged = target.parent / f".{digest[:16]}-{os.urandom(16).hex()}.tmp"
        fd = os.open(staged, os.O_WRONLY | os.O_CREAT | os.O_EXCL | OPEN_CLOEXEC, 0o600)
        try:
            write_all(fd, data)
            if durable:
                os.fsync(fd)
        except BaseException:
            os.close(fd)
            with contextlib.suppress(OSError):
                os.unlink(staged)
            raise
        os.close(fd)
        os.replace(staged, target)
        if not durable:
            return digest
        with contextlib.suppress(OSError):  # the rename itself durable too
            dir_fd = os.open(target.parent, os.O_RDONLY | OPEN_CLOEXEC)
            try:
                os.fsync(dir_fd)
            finally:
                os.close(dir_fd)
        return digest

    @property
    def pending_dir(self) -> Path:
        from pathlib import Path

        return Path(self._pending)

    def link_pending(self, path: str, dir_fd: int | None = None) -> tuple[str, os.stat_result]:
        """A second name for the file `path` (relative to `dir_fd` when given: a file name
        in a folder the caller opened without following links) — a hard link; a private
        copy, fsync'd, where links are impossible or the file already has another name than
        an image pending here (a name added while linking included) — taken in microseconds
        at commit time. Returns the pending name and the file's stat.
        Raises OSError (FileNotFoundError when `path` is gone); a failed copy leaves nothing."""
        pending = self._pending
        _private_dirs(self._root, pending)
        name = os.path.join(pending, os.urandom(16).hex())
        st = os.lstat(path, dir_fd=dir_fd)
        if st.st_nlink > 1 and not self._only_other_name_is_pending(st):
            # Another name shares the inode and may write it in place before the image is
            # hashed: a private copy, so the pre-image stays what the patch replaced.
            self._copy(path, dir_fd, name)
            return name, os.lstat(name)
        try:
            os.link(path, name, src_dir_fd=dir_fd, follow_symlinks=False)
        except FileNotFoundError:
            raise
        except OSError:  # another file system, or links not allowed: copy instead
            self._copy(path, dir_fd, name)
            return name, os.lstat(name)
        linked = os.lstat(name)
        if linked.st_nlink > st.st_nlink + 1:
            # A name was added between the check and the link: not ours, so a copy after all.
            os.unlink(name)
            self._copy(path, dir_fd, name)
            return name, os.lstat(name)
        return name, linked

    def _only_other_name_is_pending(self, st: os.stat_result) -> bool:
        """Whether the file's one other name is an image in `pending/` (the after-image of an
        earlier patch of it, not hashed yet): pct never writes through those, so a link is
        as safe as for a file with one name. Any other second name gets a private copy."""
        if st.st_nlink != 2:
            return False
        try:
            with os.scandir(self._pending) as entries:
                for seen, entry in enumerate(entries):
                    if seen >= _PENDING_SCAN_LIMIT:
                        return False  # a pile a dead writer left: not worth the look
                    if entry.inode() != st.st_ino:
                        continue
                    other = entry.stat(follow_symlinks=False)
                    same = (other.st_dev, other.st_ino) == (st.st_dev, st.st_ino)
                    return same and stat.S_ISREG(other.st_mode)
        except OSError:
            return False
        return False

    def _copy(self, path: str, dir_fd: int | None, name: str) -> None:
        fd = os.open(path, os.O_RDONLY | OPEN_NOFOLLOW | OPEN_CLOEXEC, dir_fd=dir_fd)
        try:
            st = os.fstat(fd)
            with os.fdopen(fd, "rb", closefd=False) as handle:
                data = handle.read()
        finally:
            os.close(fd)
        out = os.open(name, os.O_WRONLY | os.O_CREAT | os.O_EXCL | OPEN_CLOEXEC, 0o600)
        try:
            write_all(out, data)
            # The source's mode: the capture records the image's mode from this name (the
            # folder is 0700; a blob made of it is set 0600).
            os.fchmod(out, st.st_mode & 0o7777)
            os.fsync(out)
            # The copy keeps the source's times, so the writer's identity check holds.
            os.utime(out, ns=(st.st_atime_ns, st.st_mtime_ns))
        except BaseException:
            # A full disk mid-copy: the partial image goes now, not after the hour a
            # pending image is otherwise kept for a writer that may still name it.
            os.close(out)
            with contextlib.suppress(OSError):
                os.unlink(name)
            raise
        os.close(out)

    def sync_pending(self) -> None:
        """Make the pending names durable (one directory fsync for a whole patch)."""
        with contextlib.suppress(OSError):
            dir_fd = os.open(self._pending, os.O_RDONLY | OPEN_CLOEXEC)
            try:
                os.fsync(dir_fd)
            finally:
                os.close(dir_fd)

    def adopt(self, pending: str, digest: str, data: bytes, *, keep: bool = False) -> None:
        """Name a pending image by its hash: an inode no one else links becomes the blob
        itself (0600); a file still live elsewhere is copied (the blob must never change).
        With `keep` the pending name stays (the caller unlinks it once its row says so)."""
        target = self.path_of(digest)
        try:
            if target.exists():
                os.utime(target)
                return
            _private_dirs(self._root, target.parent)
            if os.lstat(pending).st_nlink == 1:
                os.chmod(pending, 0o600)
                if keep:
                    with contextlib.suppress(FileExistsError):
                        os.link(pending, target)
                else:
                    os.replace(pending, target)
                return
            self.put(data, digest, durable=False)
        finally:
            if not keep:
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(pending)

    def resolve_marker(self, marker: str) -> str:
        """The content address of a pending image (`pending:…`), stored as a blob; `LOST`
        when its file is gone or changed since it was taken. The pending name is kept (the
        caller unlinks it after recording the address). Raises OSError (full disk)."""
        name, _, identity = marker[len(PENDING_PREFIX) :].partition(":")
        size_text, _, mtime_text = identity.partition(":")
        if not name or "/" in name or name.startswith("."):
            return LOST
        try:
            fd = os.open(self.pending_dir / name, os.O_RDONLY | OPEN_NOFOLLOW | OPEN_CLOEXEC)
        except FileNotFoundError:
            return LOST
        try:
            st = os.fstat(fd)
            if f"{st.st_size}:{st.st_mtime_ns}" != f"{size_text}:{mtime_text}":
                return LOST
            with os.fdopen(fd, "rb", closefd=False) as handle:
                data = handle.read()
            if f"{os.fstat(fd).st_size}:{os.fstat(fd).st_mtime_ns}" != identity:
                return LOST  # written to while it was read
        finally:
            os.close(fd)
        digest = sha256_hex(data)
        try:
            self.adopt(str(self.pending_dir / name), digest, data, keep=True)
        except FileNotFoundError:  # another process named it first and removed the name
            self.put(data, digest, durable=False)
        return digest

    def unlink_pending(self, marker: str) -> None:
        name = marker[len(PENDING_PREFIX) :].partition(":")[0]
        if name and "/" not in name and not name.startswith("."):
            with contextlib.suppress(OSError):
                os.unlink(self.pending_dir / name)

    def read(self, digest: str) -> bytes | None:
        """The blob's bytes, or None when it is gone (pruned or never stored)."""
        try:
            fd = os.open(self.path_of(digest), os.O_RDONLY | OPEN_NOFOLLOW | OPEN_CLOEXEC)
        except OSError:
            return None
        try:
            with os.fdopen(fd, "rb", closefd=False) as handle:
                return handle.read()
        finally:
            os.close(fd)

    def exists(self, digest: str) -> bool:
        return self.path_of(digest).is_file()

    def walk(self) -> Iterator[tuple[str, str, int, float]]:
        """Every stored file: (path, name, size, when it was last stored or reused), pending
        images included (their ctime)."""
        try:
            shards = list(os.scandir(self._root))
        except OSError:
            return
        for shard in shards:
            if not shard.is_dir(follow_symlinks=False):
                continue
            try:
                entries = list(os.scandir(shard.path))
            except OSError:
                continue
            for entry in entries:
                if entry.name.startswith("."):
                    continue
                with contextlib.suppress(OSError):
                    st = entry.stat(follow_symlinks=False)
                    # A pending image is a link to a user's file: its mtime is the file's,
                    # maybe years old; its ctime is when it was linked (or copied).
                    fresh = st.st_ctime if shard.name == PENDING_DIR_NAME else st.st_mtime
                    yield entry.path, entry.name, st.st_size, fresh

    def total_bytes(self) -> int:
        return sum(size for _, _, size, _ in self.walk())

    def remove_unreferenced(self, referenced: set[str], now: float | None = None) -> int:
        """Remove blobs no call refers to and pending images a dead writer left; each only
        past its grace period (its call may be on its way to the database). `referenced`
        holds content addresses and the names of pending images rows still name. Returns
        bytes freed."""
        now = time.time() if now is None else now
        pending = self._pending
        freed = 0
        for path, name, size, mtime in list(self.walk()):
            is_pending = os.path.dirname(path) == pending
            grace = PENDING_GRACE_SECONDS if is_pending else PRUNE_GRACE_SECONDS
            if name in referenced or mtime > now - grace:
                continue
            with contextlib.suppress(OSError):
                os.unlink(path)
                freed += size
        return freed
