"""Content-addressed file images beside the journal: `<agent dir>/pct/journal-blobs/`.

A blob is named by the SHA-256 of its bytes (two levels: `ab/abcdef…`), written to a
private temporary name, fsync'd and renamed, mode 0600, so a crash leaves either the whole
blob or none. An existing blob is reused (its mtime refreshed, which keeps a concurrent
prune away from it until the call that needs it is recorded).
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

BLOB_DIR_NAME = "journal-blobs"
#: An unreferenced blob younger than this is kept: its call may not be recorded yet.
PRUNE_GRACE_SECONDS = 3600.0
_OPEN_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_OPEN_CLOEXEC = getattr(os, "O_CLOEXEC", 0)


def sha256_hex(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _private_dirs(root: Path, shard: Path) -> None:
    """The blob folder and its shard, each 0700 (`parents=True` would use the umask)."""
    root.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    root.mkdir(mode=0o700, exist_ok=True)
    shard.mkdir(mode=0o700, exist_ok=True)


class BlobStore:
    """Put, read and remove blobs under one directory."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def path_of(self, digest: str) -> Path:
        return self.root / digest[:2] / digest

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
        _private_dirs(self.root, target.parent)
        staged = target.parent / f".{digest[:16]}-{uuid.uuid4().hex}.tmp"
        fd = os.open(staged, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _OPEN_CLOEXEC, 0o600)
        try:
            view = memoryview(data)
            while view:
                written = os.write(fd, view)
                view = view[written:]
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
            dir_fd = os.open(target.parent, os.O_RDONLY | _OPEN_CLOEXEC)
            try:
                os.fsync(dir_fd)
            finally:
                os.close(dir_fd)
        return digest

    def read(self, digest: str) -> bytes | None:
        """The blob's bytes, or None when it is gone (pruned or never stored)."""
        try:
            fd = os.open(self.path_of(digest), os.O_RDONLY | _OPEN_NOFOLLOW | _OPEN_CLOEXEC)
        except OSError:
            return None
        try:
            with os.fdopen(fd, "rb", closefd=False) as handle:
                return handle.read()
        finally:
            os.close(fd)

    def exists(self, digest: str) -> bool:
        return self.path_of(digest).is_file()

    def walk(self) -> Iterator[tuple[str, int, float]]:
        """Every stored blob: (digest, size, mtime)."""
        try:
            shards = list(os.scandir(self.root))
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
                    yield entry.name, st.st_size, st.st_mtime

    def total_bytes(self) -> int:
        return sum(size for _, size, _ in self.walk())

    def remove_unreferenced(self, referenced: set[str], now: float | None = None) -> int:
        """Remove blobs no call refers to (older than the grace period); return bytes freed."""
        cutoff = (time.time() if now is None else now) - PRUNE_GRACE_SECONDS
        freed = 0
        for digest, size, mtime in list(self.walk()):
            if digest in referenced or mtime > cutoff:
                continue
            with contextlib.suppress(OSError):
                os.unlink(self.path_of(digest))
                freed += size
        return freed
