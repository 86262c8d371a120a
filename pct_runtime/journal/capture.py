"""File images around a patch's commit: what each file was before, and what it became.

`PatchCapture` is what the patch executor calls through its `PatchWitness` seam, in the
patch's worker thread. At commit time it only takes a second name for each file — a hard
link to the inode the patch is about to replace or remove (before) or has just written
(after), made durable by one directory fsync before the first rename — so a 100,000-line
patch pays microseconds, not a copy. Hashing and naming the images by content happen
later, on the journal's writer thread (`files()`); an image whose file changed in between
(same inode, other size or mtime) is dropped and the patch is simply not undoable.
`pending_images()` (`pct apply-patch`, a process that exits at once) hashes nothing: each
image stays a `pending:` marker in its spooled row, named later by `Journal.resolve_pending`
(undo, diff, retention).
Where links are impossible (another file system) the image is copied and fsync'd instead.
"""

from __future__ import annotations

import contextlib
import os
import stat
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, NamedTuple

from pct_runtime.journal.blobs import (
    OPEN_CLOEXEC,
    OPEN_NOFOLLOW,
    PENDING_PREFIX,
    BlobStore,
    sha256_hex,
)

if TYPE_CHECKING:  # `pct apply-patch` builds no record: its spool takes plain markers
    from pct_runtime.journal.records import FileImage, PatchFile


class CaptureError(Exception):
    """A file's image could not be taken (not a regular file, unreadable)."""


def read_image(path: str) -> tuple[bytes, int] | None:
    """(bytes, permission bits) of the regular file at `path`, None when absent.

    Never follows a symbolic link; raises `CaptureError` for anything but a regular file.
    """
    try:
        fd = os.open(path, os.O_RDONLY | OPEN_NOFOLLOW | OPEN_CLOEXEC)
    except FileNotFoundError:
        return None
    except OSError as exc:
        if os.path.islink(path):
            raise CaptureError(f"{path} is a symbolic link") from None
        raise CaptureError(f"{path}: {exc.strerror or exc}") from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise CaptureError(f"{path} is not a regular file")
        with os.fdopen(fd, "rb", closefd=False) as handle:
            return handle.read(), stat.S_IMODE(st.st_mode)
    finally:
        os.close(fd)


class _Taken(NamedTuple):
    """A file's second name at commit time, with the identity it had then."""

    pending: str
    mode: int
    identity: tuple[int, int, int, int]


def _identity(st: os.stat_result) -> tuple[int, int, int, int]:
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)


def _marked(taken: _Taken | None) -> tuple[str, int] | None:
    """`pending:<name>:<size>:<mtime_ns>` and the mode: an image named by its hash later."""
    if taken is None:
        return None
    _dev, _ino, size, mtime_ns = taken.identity
    name = os.path.basename(taken.pending)
    return f"{PENDING_PREFIX}{name}:{size}:{mtime_ns}", taken.mode


class PatchCapture:
    """Before/after images of the files one patch changes (`before_commit`, `after_commit`),
    resolved to content-addressed `PatchFile`s by `files()` (blocking: reads and hashes)."""

    def __init__(self, blobs: BlobStore, report: Callable[[str], None] | None = None) -> None:
        self._blobs = blobs
        self._report = report
        self._paths: list[str] = []
        self._before: dict[str, _Taken | None] = {}
        self._after: dict[str, _Taken | None] = {}
        self._resolved: tuple[PatchFile, ...] | None = None
        self.failed: str | None = None

    def _take(self, path: str) -> _Taken | None:
        try:
            st = os.lstat(path)
        except FileNotFoundError:
            return None
        if not stat.S_ISREG(st.st_mode):
            raise CaptureError(f"{path} is not a regular file")
        pending, taken = self._blobs.link_pending(path)
        return _Taken(pending, stat.S_IMODE(taken.st_mode), _identity(taken))

    def before_commit(self, paths: Sequence[str]) -> None:
        """Take every pre-image durably; called after staging, before the first rename."""
        self._paths = list(dict.fromkeys(paths))
        try:
            for path in self._paths:
                self._before[path] = self._take(path)
            self._blobs.sync_pending()
        except (OSError, CaptureError) as exc:
            self._fail(f"the pre-image could not be stored ({exc}); this patch is not undoable")

    def after_commit(self) -> None:
        """Take every post-image; called once the commit is over."""
        if self.failed is not None:
            return
        try:
            for path in self._paths:
                self._after[path] = self._take(path)
        except (OSError, CaptureError) as exc:
            self._fail(f"the post-image could not be stored ({exc}); this patch is not undoable")

    def _fail(self, message: str) -> None:
        self.failed = message
        self.discard()
        if self._report is not None:
            self._report(message)

    @property
    def paths(self) -> tuple[str, ...]:
        """The files the patch named (before its commit: none)."""
        return tuple(self._paths)

    def discard(self) -> None:
        """Remove every pending name (a failed capture keeps nothing)."""
        for taken in (*self._before.values(), *self._after.values()):
            if taken is not None:
                with contextlib.suppress(OSError):
                    os.unlink(taken.pending)
        self._before.clear()
        self._after.clear()

    def _resolve(self, taken: _Taken | None) -> FileImage | None:
        if taken is None:
            return None
        fd = os.open(taken.pending, os.O_RDONLY | OPEN_NOFOLLOW | OPEN_CLOEXEC)
        try:
            with os.fdopen(fd, "rb", closefd=False) as handle:
                data = handle.read()
            if _identity(os.fstat(fd)) != taken.identity:
                raise CaptureError("the file changed right after the patch")
        finally:
            os.close(fd)
        digest = sha256_hex(data)
        self._blobs.adopt(taken.pending, digest, data)
        from pct_runtime.journal.records import FileImage

        return FileImage(digest, taken.mode)

    def pending_images(self) -> list[tuple[str, tuple[str, int] | None, tuple[str, int] | None]]:
        """(path, before, after) with each side a (`pending:` marker, mode) or None (absent),
        the pending names kept; empty when the capture is incomplete. No hashing, no record
        types: what `pct apply-patch` spools."""
        if self.failed is not None or not self._after:
            self.discard()
            return []
        out = [
            (path, _marked(self._before.get(path)), _marked(self._after.get(path)))
            for path in self._paths
        ]
        self._before.clear()
        self._after.clear()
        return out

    def files(self) -> tuple[PatchFile, ...]:
        """The changed files, content-addressed (empty when the capture is incomplete or
        nothing committed). Blocking; runs once, on the writer thread."""
        if self._resolved is not None:
            return self._resolved
        if self.failed is not None or not self._after:
            self.discard()
            self._resolved = ()
            return ()
        from pct_runtime.journal.records import PatchFile

        out: list[PatchFile] = []
        try:
            for path in self._paths:
                before = self._resolve(self._before.get(path))
                after = self._resolve(self._after.get(path))
                if before != after:
                    out.append(PatchFile(path, before, after))
        except (OSError, CaptureError) as exc:
            self._fail(f"the file images could not be stored ({exc}); this patch is not undoable")
            self._resolved = ()
            return ()
        self._before.clear()
        self._after.clear()
        self._resolved = tuple(out)
        return self._resolved
